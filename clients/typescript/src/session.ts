import { RosterError, RosterNetworkError } from './errors.js';
import type { Session } from './types.js';

const nowSeconds = (): number => Date.now() / 1000;

const signedOut = (message: string): RosterError => new RosterError({ status: 401, code: 'unauthorized', message });

export interface SessionKeeperOptions {
  session: Session | null;
  /** Refresh once the access token has less than this many seconds left. */
  refreshMarginSeconds: number;
  onChange: (session: Session | null) => void;
  /** POST /api/auth/refresh with this refresh token. */
  exchange: (refreshToken: string) => Promise<Session>;
}

/**
 * Holds the session and keeps its access token fresh. The API rotates the refresh token on every
 * use and ends the whole session when a rotated one comes back later, so a refresh token is sent
 * at most once, and concurrent callers share one refresh.
 */
export class SessionKeeper {
  #session: Session | null;
  #refreshing: Promise<Session> | null = null;
  /** A refresh token sent without an answer: the server may have rotated it, so never again. */
  #spent: string | null = null;
  readonly #options: SessionKeeperOptions;

  constructor(options: SessionKeeperOptions) {
    this.#options = options;
    this.#session = options.session;
  }

  get current(): Session | null {
    return this.#session;
  }

  set(session: Session | null): void {
    if (session === this.#session) return;
    this.#session = session;
    this.#options.onChange(session);
  }

  /** The access token to send, refreshed first when it is about to expire; null when signed out. */
  async accessToken(): Promise<string | null> {
    const session = this.#session;
    if (!session || session.expires_at - nowSeconds() > this.#options.refreshMarginSeconds) {
      return session?.access_token ?? null;
    }
    try {
      return (await this.refresh()).access_token;
    } catch (error) {
      // Refreshing early failed (network, 429, 503): the current token works until it expires.
      if (this.#session === session && session.expires_at > nowSeconds()) return session.access_token;
      throw error;
    }
  }

  /** After a 401 for `token`: the token to retry with once, or null when there is none. */
  async renew(token: string): Promise<string | null> {
    const session = this.#session;
    if (!session) return null;
    if (session.access_token !== token) return session.access_token; // refreshed meanwhile
    try {
      return (await this.refresh()).access_token;
    } catch (error) {
      if (error instanceof RosterError) return null;
      throw error;
    }
  }

  /** A new token pair; every caller during a refresh gets that same refresh. */
  refresh(): Promise<Session> {
    this.#refreshing ??= this.#rotate().finally(() => (this.#refreshing = null));
    return this.#refreshing;
  }

  async #rotate(): Promise<Session> {
    const session = this.#session;
    if (!session) throw signedOut('Not signed in.');
    if (session.refresh_token === this.#spent) {
      if (session.expires_at <= nowSeconds()) this.set(null);
      throw signedOut('The session can no longer be refreshed: sign in again.');
    }
    let next: Session;
    try {
      next = await this.#options.exchange(session.refresh_token);
    } catch (error) {
      if (error instanceof RosterNetworkError) this.#spent = session.refresh_token;
      // The server refused the refresh token: the session is over.
      if (error instanceof RosterError && error.status === 401 && this.#session === session) this.set(null);
      throw error;
    }
    // A sign-in or sign-out while the refresh was under way wins.
    if (this.#session === session) this.set(next);
    return next;
  }
}
