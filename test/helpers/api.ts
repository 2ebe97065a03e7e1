import { afterAll, beforeAll } from 'vitest';
import type { Db } from '#lib/db/service.ts';
import type { LocalServer } from '#lib/http/server.ts';
import { expectDocumented } from './openapi.ts';

export interface Reply {
  status: number;
  headers: Headers;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are asserted field by field
  body: any;
}

export interface CallOptions {
  token?: string;
  /** Sent as JSON with `content-type: application/json`. */
  json?: unknown;
  /** Sent exactly as given (no content type unless set in headers). */
  raw?: string | Buffer;
  headers?: Record<string, string>;
}

export interface Api {
  url: string;
  call: (method: string, path: string, options?: CallOptions) => Promise<Reply>;
  /** The server's table, where `signUp` makes verification tokens; unknown for a server of another process unless given. */
  table?: () => Promise<Db>;
}

// Lib modules are loaded when first used, never when this file is imported: a test file sets the
// environment (its settings) after its imports, and lib/core/config.ts reads it once, on load.
const dbModule = () => import('#lib/db/service.ts');

/** One request to the API at `url`. The answer must be one openapi.json documents, or this throws. */
export const callApi = async (url: string, method: string, path: string, options: CallOptions = {}): Promise<Reply> => {
  const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
  if (options.token) headers.authorization = `Token ${options.token}`;
  let body: string | Buffer | undefined = options.raw;
  if (options.json !== undefined) {
    headers['content-type'] ??= 'application/json';
    body = JSON.stringify(options.json);
  }
  // Joined, not resolved: a path such as `//x` must reach the server as it is.
  const target = new URL(`${url}${path}`);
  // Redirects are answers to assert (a provider sign-in's 302s), not to follow.
  const res = await fetch(target, { method, headers, redirect: 'manual', ...(body !== undefined ? { body } : {}) });
  const text = await res.text();
  expectDocumented(method, target.pathname, { status: res.status, headers: res.headers, text });
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // left as text: the assertions will say what came back
  }
  return { status: res.status, headers: res.headers, body: parsed };
};

/**
 * The API served at `url` (a server of another process). `tableName`, that server's table on the
 * same DynamoDB Local, lets `signUp` confirm addresses there; without it, sign up with
 * `{ confirmed: false }`.
 */
export const apiAt = (url: string, tableName?: string): Api => {
  let table: Db | undefined;
  const api: Api = { url, call: (method, path, options) => callApi(url, method, path, options) };
  if (tableName !== undefined) {
    api.table = async () => {
      const [{ createDb }, { createDocumentClient }] = await Promise.all([dbModule(), import('#lib/db/client.ts')]);
      return (table ??= createDb(createDocumentClient(), tableName));
    };
  }
  return api;
};

/** Starts the local server (same handlers as the stack) for this test file; stops it afterwards. */
export const useApi = (): Api => {
  let server: LocalServer;
  const api: Api = { url: '', call: (method, path, options) => callApi(api.url, method, path, options) };
  beforeAll(async () => {
    const { startLocalServer } = await import('#lib/http/server.ts');
    server = await startLocalServer(0);
    api.url = server.url;
    // The in-process server uses this file's table, as the test does.
    const { db } = await dbModule();
    api.table = async () => db();
  });
  afterAll(() => server.close());
  return api;
};

let counter = 0;
/** A fresh e-mail address for this test file. */
export const freshEmail = (name = 'user'): string => `${name}-${Date.now().toString(36)}-${++counter}@example.com`;

export interface TestUser {
  email: string;
  password: string;
  token: string;
  refreshToken: string;
  uuid: string;
}

/**
 * Signs up a fresh user: confirmed by default, through the real POST /api/auth/verify with a
 * verification token made as the mailer makes it (`issueToken`, in the server's table: no mail
 * involved); `{ confirmed: false }` leaves the address unconfirmed. Confirming needs the server's
 * table (`api.table`): `useApi` knows it, `apiAt` only when told.
 */
export const signUp = async (api: Api, name = 'user', { confirmed = true }: { confirmed?: boolean } = {}): Promise<TestUser> => {
  const email = freshEmail(name);
  const password = 'correct horse battery staple';
  const res = await api.call('POST', '/api/auth/signup', { json: { email, password, firstName: name, lastName: 'Tester' } });
  if (res.status !== 201) throw new Error(`sign-up failed: ${res.status} ${JSON.stringify(res.body)}`);
  const session = res.body.data.session;
  const user: TestUser = { email, password, token: session.access_token, refreshToken: session.refresh_token, uuid: session.user.id };
  if (confirmed) await confirm(api, user);
  return user;
};

/** Confirms `user`'s address as following the link of the verification e-mail would. */
export const confirm = async (api: Api, user: Pick<TestUser, 'email' | 'uuid'>): Promise<void> => {
  if (!api.table)
    throw new Error(
      `cannot confirm ${user.email}: the server's table is unknown (apiAt(url, tableName), or signUp with { confirmed: false })`,
    );
  const { issueToken } = await import('#lib/auth/account-tokens.ts');
  const token = await issueToken(
    await api.table(),
    { purpose: 'verification', email: user.email, user: { userUuid: user.uuid, tokenEpoch: 0 } },
    new Date(),
  );
  const res = await api.call('POST', '/api/auth/verify', { json: { token } });
  if (res.status !== 200) throw new Error(`verification failed: ${res.status} ${JSON.stringify(res.body)}`);
};

let slugs = 0;
export const freshSlug = (name = 'team'): string => `${name}-${Date.now().toString(36)}-${++slugs}`;

/** Creates a team owned by `owner`; returns its slug and id. */
export const createTeam = async (api: Api, owner: TestUser, slug = freshSlug()): Promise<{ slug: string; id: number }> => {
  const res = await api.call('POST', '/api/teams', { token: owner.token, json: { name: `Team ${slug}`, slug } });
  if (res.status !== 201) throw new Error(`create team failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { slug, id: res.body.data.id };
};

/** Invites `user` with `role` as `by`, and accepts as `user`; returns the new membership's id. */
export const addMember = async (api: Api, slug: string, by: TestUser, user: TestUser, role: string): Promise<number> => {
  const invited = await api.call('POST', `/api/teams/${slug}/invites`, { token: by.token, json: { email: user.email, role } });
  if (invited.status !== 201) throw new Error(`invite failed: ${invited.status} ${JSON.stringify(invited.body)}`);
  const mine = await api.call('GET', '/api/invites', { token: user.token });
  const invite = mine.body.data.find((i: { team: { slug: string } }) => i.team.slug === slug);
  const accepted = await api.call('POST', `/api/invites/${invite.uuid}/accept`, { token: user.token });
  if (accepted.status !== 200) throw new Error(`accept failed: ${accepted.status} ${JSON.stringify(accepted.body)}`);
  const members = await api.call('GET', `/api/teams/${slug}/members?limit=1000`, { token: user.token });
  return members.body.data.find((m: { email: string }) => m.email === user.email).id;
};
