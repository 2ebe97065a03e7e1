import type { Caller } from '../caller.js';
import { RosterError } from '../errors.js';
import { type BodyOf, type QueryOf, type Session, type SessionInfo, type User, type WriteOptions, idempotencyHeader } from '../types.js';

export const authResource = ({ api, anonymous, call, session }: Caller) => ({
  /**
   * Creates an account and signs it in; the client keeps the session. A deployment that conceals
   * accounts (`CONCEAL_ACCOUNTS=true`) signs no one in here: the answer is null, and the user
   * signs in once the address is confirmed.
   */
  async signUp(body: BodyOf<'auth-signup'>): Promise<Session | null> {
    const { data } = await anonymous(() => api.POST('/api/auth/signup', { body }));
    const signedIn = 'session' in data.data && data.data.session ? data.data.session : null;
    if (signedIn) session.set(signedIn);
    return signedIn;
  },

  /** Signs in; the client keeps the session. */
  async signIn(body: BodyOf<'auth-signin'>): Promise<Session> {
    const { data } = await anonymous(() => api.POST('/api/auth/signin', { body }));
    session.set(data.data.session);
    return data.data.session;
  },

  /**
   * Ends the session on the server (`scope: 'global'`: every session of the user) and forgets it
   * here, even when the server could not be reached. A session that had already ended is no error.
   */
  async signOut(query: QueryOf<'auth-signout'> = {}, options?: WriteOptions): Promise<void> {
    try {
      await call((headers) => api.POST('/api/auth/signout', { headers, params: { query, ...idempotencyHeader(options) } }));
    } catch (error) {
      if (!(error instanceof RosterError && error.status === 401)) throw error;
    } finally {
      session.set(null);
    }
  },

  /** A new token pair now (the client also refreshes by itself before the access token expires). */
  refresh: (): Promise<Session> => session.refresh(),

  async user(): Promise<User> {
    return (await call((headers) => api.GET('/api/auth/user', { headers }))).data.data;
  },

  /**
   * New names, or with `currentPassword` a new password (which ends the user's other sessions) or a
   * new `email`: that one changes only once the link mailed to the new address is followed
   * (`verify`); until then the user shows it as `new_email`.
   */
  async updateUser(body: BodyOf<'auth-user-update'>): Promise<User> {
    return (await call((headers) => api.PUT('/api/auth/user', { headers, body }))).data.data;
  },

  /**
   * Uses the token of a mailed link: confirms the address (sign-up, resend) or makes the e-mail
   * change it was sent for. Needs no session. A used, expired or unknown token: 410 `token_expired`.
   */
  async verify(token: string): Promise<User> {
    return (await anonymous(() => api.POST('/api/auth/verify', { body: { token } }))).data.data;
  },

  /** Mails the signed-in user a new link to confirm their address (nothing when already confirmed). */
  async resendVerification(options?: WriteOptions): Promise<void> {
    await call((headers) => api.POST('/api/auth/verify/resend', { headers, params: idempotencyHeader(options) }));
  },

  /** Asks for a password reset link; the answer is the same whether or not an account has `email`. */
  async recover(email: string): Promise<void> {
    await anonymous(() => api.POST('/api/auth/recover', { body: { email } }));
  },

  /**
   * Sets a new password with the token of a reset link. The server ends every session of the user
   * and answers a new one, which the client keeps, as after sign-in.
   */
  async reset(token: string, password: string): Promise<Session> {
    const { data } = await anonymous(() => api.POST('/api/auth/reset', { body: { token, password } }));
    session.set(data.data.session);
    return data.data.session;
  },

  /**
   * Deletes the signed-in account (409 `sole_owner` while it is the only owner of a team, the slugs
   * in `fields.teams`); the server ends its sessions and the client forgets this one.
   */
  async deleteAccount(currentPassword: string): Promise<void> {
    await call((headers) => api.DELETE('/api/auth/user', { headers, body: { currentPassword } }));
    session.set(null);
  },

  /** The user's live sessions; `current` marks this one. */
  async sessions(): Promise<SessionInfo[]> {
    return (await call((headers) => api.GET('/api/auth/sessions', { headers }))).data.data;
  },

  async revokeSession(sessionId: string): Promise<void> {
    await call((headers) => api.DELETE('/api/auth/sessions/{sessionId}', { headers, params: { path: { sessionId } } }));
  },
});

export type AuthResource = ReturnType<typeof authResource>;
