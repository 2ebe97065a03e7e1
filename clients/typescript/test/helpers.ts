import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { inject } from 'vitest';
import { RosterClient, type RosterClientOptions } from '../src/index.js';

export const baseUrl = inject('baseUrl');
const serverLog = inject('serverLog');

export const PASSWORD = 'correct horse battery staple';

/** A string no other test uses: e-mails and slugs are unique across the whole server. */
export const unique = (prefix: string): string => `${prefix}-${randomUUID().slice(0, 8)}`;

export const newClient = (options: Partial<RosterClientOptions> = {}): RosterClient => new RosterClient({ baseUrl, ...options });

/** What the log mail transport writes for each message it would send (lib/mail/transports.ts). */
interface MailLine {
  message?: string;
  to?: string;
  links?: string[];
}

/** The `token`s of the links to `page` in the messages sent to `to` so far, oldest first. */
const mailedTokens = (to: string, page: string): string[] =>
  readFileSync(serverLog, 'utf8')
    .split('\n')
    .flatMap((line) => {
      let entry: MailLine;
      try {
        entry = JSON.parse(line) as MailLine;
      } catch {
        return []; // not a log line of ours (DynamoDB Local's output), or one still being written
      }
      if (entry.message !== 'mail (log transport, not sent)' || entry.to !== to) return [];
      return (entry.links ?? []).map((link) => new URL(link)).filter((url) => url.pathname === page);
    })
    .flatMap((url) => url.searchParams.get('token') ?? []);

/**
 * The token of the `nth` message (from 1) to `to` with a link to `page`, as its recipient would
 * find it: the server mails from its outbox in the background, so this waits for it.
 */
export const mailedToken = async (to: string, page: '/verify' | '/reset', nth = 1): Promise<string> => {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const token = mailedTokens(to, page)[nth - 1];
    if (token !== undefined) return token;
    if (Date.now() > deadline) throw new Error(`no message ${nth} with a ${page} link to ${to} in ${serverLog}`);
    await sleep(100);
  }
};

/**
 * What `read` answers once `done` holds for it, asked every 200 ms for up to 20 s: for what the
 * server does in the background (the webhook fan-out, queue and delivery log, say).
 */
export const eventually = async <T>(what: string, read: () => Promise<T>, done: (value: T) => boolean): Promise<T> => {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within 20 s; last: ${JSON.stringify(value)}`);
    await sleep(200);
  }
};

/**
 * A client signed in as a new user, whose address is confirmed with the link of its verification
 * e-mail (invites need a confirmed address) unless `confirmed` is false.
 */
export const signedUp = async (name: string, options: Partial<RosterClientOptions> = {}, { confirmed = true } = {}) => {
  const client = newClient(options);
  const email = `${unique(name)}@example.com`;
  // The test server does not conceal accounts: sign-up signs in.
  const session = present(await client.auth.signUp({ email, password: PASSWORD, firstName: name, lastName: 'Test' }));
  if (confirmed) await client.auth.verify(await mailedToken(email, '/verify'));
  return { client, email, session };
};

/** A fetch that records each request's method, path, query and Authorization header before sending it. */
export const recordingFetch = () => {
  const requests: { method: string; path: string; query: URLSearchParams; authorization: string | null }[] = [];
  const send = (request: Request): Promise<Response> => {
    const { pathname: path, searchParams: query } = new URL(request.url);
    requests.push({ method: request.method, path, query, authorization: request.headers.get('authorization') });
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
