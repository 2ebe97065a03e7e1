import createClient, { type Client } from 'openapi-fetch';
import { RosterError, RosterNetworkError } from './errors.js';
import type { paths } from './schema.js';
import { SessionKeeper } from './session.js';
import type { Session } from './types.js';

/** What openapi-fetch answers: the parsed body of a 2xx as `data`, any other as `error`. */
interface Answer<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** A 2xx answer. */
export interface Ok<T> {
  data: T;
  response: Response;
}

/** A type, not an interface: openapi-fetch's `headers` wants an index signature. */
export type AuthHeaders = { Authorization?: string };

export interface CallerOptions {
  baseUrl: string;
  fetch: (request: Request) => Promise<Response>;
  session: Session | null;
  refreshMarginSeconds: number;
  onSessionChange: (session: Session | null) => void;
}

/** How every operation is sent; shared by the resource groups. */
export interface Caller {
  api: Client<paths>;
  session: SessionKeeper;
  /** Without a token. */
  anonymous<T>(send: () => Promise<Answer<T>>): Promise<Ok<T>>;
  /** With the session's token, refreshed first when near expiry; after a 401, refreshed and retried once. */
  call<T>(send: (headers: AuthHeaders) => Promise<Answer<T>>): Promise<Ok<T>>;
}

const ok = <T>({ data, error, response }: Answer<T>): Ok<T> => {
  if (!response.ok || data === undefined) throw RosterError.from(response, error);
  return { data, response };
};

const authorization = (token: string | null): AuthHeaders => (token === null ? {} : { Authorization: `Token ${token}` });

export const createCaller = (options: CallerOptions): Caller => {
  const api = createClient<paths>({
    baseUrl: options.baseUrl,
    fetch: async (request: Request) => {
      try {
        return await options.fetch(request);
      } catch (error) {
        throw new RosterNetworkError(error);
      }
    },
  });
  const anonymous = async <T>(send: () => Promise<Answer<T>>): Promise<Ok<T>> => ok(await send());
  const session = new SessionKeeper({
    session: options.session,
    refreshMarginSeconds: options.refreshMarginSeconds,
    onChange: options.onSessionChange,
    exchange: async (refresh_token) =>
      (await anonymous(() => api.POST('/api/auth/refresh', { body: { refresh_token } }))).data.data.session,
  });
  const call = async <T>(send: (headers: AuthHeaders) => Promise<Answer<T>>): Promise<Ok<T>> => {
    const token = await session.accessToken();
    let answer = await send(authorization(token));
    if (answer.response.status === 401 && token !== null) {
      // Refused before its expiry as this clock sees it (skew, or the session ended elsewhere):
      // refresh once and retry once; a session that ended fails the refresh and is forgotten.
      const retry = await session.renew(token);
      if (retry !== null) answer = await send(authorization(retry));
    }
    return ok(answer);
  };
  return { api, session, anonymous, call };
};
