import { randomUUID } from 'node:crypto';
import { inject } from 'vitest';
import { RosterClient, type RosterClientOptions } from '../src/index.js';

export const baseUrl = inject('baseUrl');

export const PASSWORD = 'correct horse battery staple';

/** A string no other test uses: e-mails and slugs are unique across the whole server. */
export const unique = (prefix: string): string => `${prefix}-${randomUUID().slice(0, 8)}`;

export const newClient = (options: Partial<RosterClientOptions> = {}): RosterClient => new RosterClient({ baseUrl, ...options });

/** A client signed in as a new user. */
export const signedUp = async (name: string, options: Partial<RosterClientOptions> = {}) => {
  const client = newClient(options);
  const email = `${unique(name)}@example.com`;
  const session = await client.auth.signUp({ email, password: PASSWORD, firstName: name, lastName: 'Test' });
  return { client, email, session };
};

/** A fetch that records each request's method, path and Authorization header before sending it. */
export const recordingFetch = () => {
  const requests: { method: string; path: string; authorization: string | null }[] = [];
  const send = (request: Request): Promise<Response> => {
    requests.push({ method: request.method, path: new URL(request.url).pathname, authorization: request.headers.get('authorization') });
    return fetch(request);
  };
  return { requests, fetch: send };
};

/** The one item `items` must hold here. */
export const only = <T>(items: readonly T[]): T => {
  const [item, ...rest] = items;
  if (item === undefined || rest.length > 0) throw new Error(`expected exactly one item, got ${items.length}`);
  return item;
};

/** A value the test has just made sure exists. */
export const present = <T>(value: T | null | undefined): T => {
  if (value === null || value === undefined) throw new Error('expected a value');
  return value;
};
