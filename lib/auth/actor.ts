/**
 * Who an access token names: its subject, e-mail and session. Use cases never see one directly:
 * they get the token's `Claims` and, once the session is read and found live, an `Actor`
 * (session-items.ts).
 */
export interface Identity {
  userUuid: string;
  email: string;
  sessionId: string;
  /**
   * The assurance level: `aal2` once the session proved a second factor (docs/mfa.md). An Actor's
   * is `aal2` only when both its token and its session item say so (readAsActor).
   */
  aal: 'aal1' | 'aal2';
}
