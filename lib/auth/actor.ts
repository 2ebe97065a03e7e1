/**
 * Who is calling, as claimed by a verified access token. The claim is trusted only once the
 * session it names has been read and found live (`sessionChecked`): every authenticated use case
 * reads the session together with its first read, before it writes or answers anything.
 */
export interface Actor {
  userUuid: string;
  email: string;
  sessionId: string;
  sessionChecked: boolean;
}
