import type { Caller } from '../caller.js';
import { RosterError } from '../errors.js';
import type { BodyOf, QueryOf, Session, SessionInfo, User } from '../types.js';

export const authResource = ({ api, anonymous, call, session }: Caller) => ({
  /** Creates an account and signs it in; the client keeps the session. */
  async signUp(body: BodyOf<'auth-signup'>): Promise<Session> {
    const { data } = await anonymous(() => api.POST('/api/auth/signup', { body }));
    session.set(data.data.session);
    return data.data.session;
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
  async signOut(query: QueryOf<'auth-signout'> = {}): Promise<void> {
    try {
      await call((headers) => api.POST('/api/auth/signout', { headers, params: { query } }));
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

  /** New names, or a new password with `currentPassword` (which ends the user's other sessions). */
  async updateUser(body: BodyOf<'auth-user-update'>): Promise<User> {
    return (await call((headers) => api.PUT('/api/auth/user', { headers, body }))).data.data;
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
