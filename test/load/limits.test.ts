/**
 * Brute-force protection through the local server (SECURITY-TESTS.md A1, A3–A6, 1.2): the
 * back-off per (account, source network) and the hourly cap per account across networks, the
 * per-IP buckets of sign-in and sign-up, a limiter that cannot reach DynamoDB, and the
 * common-password list at sign-up. Each test sends from its own loopback addresses (127.0.N.M),
 * which the local server passes on as API Gateway's sourceIp; each IPv4 address is a network of
 * its own. The server runs in this process, so freezing `Date` here freezes the handlers' clock.
 */
import { argon2Sync, randomBytes, randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { accountSubject } from '#lib/limits/account-key.ts';
import { accountNetworkSubject } from '#lib/limits/password-backoff.ts';
import { config } from '#lib/core/config.ts';
import { db } from '#lib/db/service.ts';
import { newId } from '#lib/core/ids.ts';
import { type Reply, freshEmail, signUp, useApi } from '../helpers/api.ts';
import { expectDocumented } from '../helpers/openapi.ts';

// These tests assume the default limits, whatever the shared test setup sets: config reads the
// environment once, when it is first imported, which happens after this.
vi.hoisted(() => {
  for (const name of Object.keys(process.env)) if (name.startsWith('RATE_LIMIT_')) Reflect.deleteProperty(process.env, name);
});

const api = useApi();

/** POSTs JSON from the loopback address `ip`. */
const post = (ip: string, path: string, json: unknown, headers: Record<string, string> = {}): Promise<Reply> =>
  new Promise((resolve, reject) => {
    const url = new URL(path, api.url);
    const req = request(
      url,
      {
        method: 'POST',
        localAddress: ip,
        agent: false,
        headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          const replyHeaders = new Headers();
          for (const [name, value] of Object.entries(res.headers)) if (value !== undefined) replyHeaders.set(name, String(value));
          const text = Buffer.concat(chunks).toString('utf8');
          expectDocumented('POST', url.pathname, { status: res.statusCode ?? 0, headers: replyHeaders, text });
          let body: unknown = text;
          try {
            body = JSON.parse(text);
          } catch {
            // left as text for the assertion messages
          }
          resolve({ status: res.statusCode ?? 0, headers: replyHeaders, body });
        });
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(json));
  });

const signIn = (ip: string, email: string, password: string, headers?: Record<string, string>) =>
  post(ip, '/api/auth/signin', { email, password }, headers);

const WRONG = 'not the password at all';

/** "401 invalid_credentials", "429 rate_limited 1" (with Retry-After), "200". */
const outcome = (r: Reply): string =>
  [r.status, r.body?.error?.code, r.headers.get('retry-after') ?? undefined].filter((part) => part !== undefined).join(' ');

const tally = (replies: Reply[]): Record<string, number> => {
  const counts: Record<string, number> = {};
  for (const r of replies) counts[outcome(r)] = (counts[outcome(r)] ?? 0) + 1;
  return counts;
};

/** Runs `count` calls, at most `width` at a time. */
const batched = async <T>(count: number, width: number, call: (i: number) => Promise<T>): Promise<T[]> => {
  const results: T[] = [];
  for (let start = 0; start < count; start += width) {
    results.push(...(await Promise.all(Array.from({ length: Math.min(width, count - start) }, (_, j) => call(start + j)))));
  }
  return results;
};

/** Freezes the clock of this process (and so of the handlers) at `ms`; timers keep running. */
const freeze = (ms = Date.now()) => vi.useFakeTimers({ toFake: ['Date'], now: ms });
const advance = (ms: number) => vi.setSystemTime(Date.now() + ms);

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

/** Seeds the consecutive failures of an account from the network of `ip` (for states that take long to reach). */
const seedNetwork = (email: string, ip: string, state: { fails: number; until: number }) =>
  db()
    .entities.rateLimit.update({ scope: 'account-net', subject: accountNetworkSubject(email, ip) })
    .set({ ...state, ttl: Math.ceil(Date.now() / 1000) + 86_400 })
    .go();

/** Seeds an account's failures of the last hour, from whatever networks (for states that take an hour to reach). */
const seedHourly = (email: string, recent: number[]) =>
  db()
    .entities.rateLimit.update({ scope: 'account', subject: accountSubject(email) })
    .set({ recent, ttl: Math.ceil(Date.now() / 1000) + 86_400 })
    .go();

describe('sign-in: one answer for unknown e-mails and wrong passwords (A1)', () => {
  it('gives the same status, code, message and headers', async () => {
    const user = await signUp(api, 'a1');
    const ip = '127.0.1.1';
    const wrong = await signIn(ip, user.email, WRONG);
    const unknown = await signIn(ip, freshEmail('nobody'), WRONG);
    const spaced = await signIn(ip, `  ${user.email.toUpperCase()} `, WRONG);
    const comparable = (r: Reply) => ({
      status: r.status,
      body: r.body,
      headers: [...r.headers].filter(([name]) => !['x-request-id', 'date'].includes(name)),
    });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error.code).toBe('invalid_credentials');
    expect(comparable(unknown)).toEqual(comparable(wrong));
    expect(comparable(spaced)).toEqual(comparable(wrong));
  });
});

describe('back-off per account and network, hourly cap per account (A3)', () => {
  it('refuses after 5 failures with Retry-After, the right password too, and lets it through after the wait', async () => {
    const user = await signUp(api, 'backoff');
    const ip = '127.0.2.1';
    freeze();
    for (let i = 0; i < 5; i++) expect(outcome(await signIn(ip, user.email, WRONG)), `failure ${i + 1}`).toBe('401 invalid_credentials');
    const limited = await signIn(ip, user.email, WRONG);
    expect(outcome(limited)).toBe('429 rate_limited 1');
    const right = await signIn(ip, user.email, user.password);
    expect(outcome(right)).toBe('429 rate_limited 1');
    expect(right.body).toEqual(limited.body);
    expect(right.body.error.message).toMatch(/too many/i);

    advance(1000);
    expect(outcome(await signIn(ip, user.email, WRONG))).toBe('401 invalid_credentials');
    expect(outcome(await signIn(ip, user.email, user.password))).toBe('429 rate_limited 2');
    advance(1999);
    expect(outcome(await signIn(ip, user.email, user.password))).toBe('429 rate_limited 1');
    advance(1);
    expect(outcome(await signIn(ip, user.email, user.password))).toBe('200');

    // The success reset the consecutive count: 5 more failures before the next back-off.
    for (let i = 0; i < 5; i++) expect(outcome(await signIn(ip, user.email, WRONG))).toBe('401 invalid_credentials');
    expect(outcome(await signIn(ip, user.email, WRONG))).toBe('429 rate_limited 1');
  });

  it('limits an unknown e-mail exactly like a known one', async () => {
    const ip = '127.0.2.2';
    const nobody = freshEmail('nobody');
    freeze();
    const replies = [];
    for (let i = 0; i < 6; i++) replies.push(outcome(await signIn(ip, nobody, WRONG)));
    expect(replies).toEqual([...Array<string>(5).fill('401 invalid_credentials'), '429 rate_limited 1']);
  });

  it('waits at most 15 minutes: no permanent lockout', async () => {
    const victim = await signUp(api, 'lockout');
    const ip = '127.0.2.3';
    freeze();
    await seedNetwork(victim.email, ip, { fails: 40, until: Date.now() + 900_000 });
    expect(outcome(await signIn(ip, victim.email, victim.password))).toBe('429 rate_limited 900');
    advance(900_000);
    expect(outcome(await signIn(ip, victim.email, victim.password))).toBe('200');
  });

  it("lets the owner on another network sign in while a guesser's network is backing off", async () => {
    const victim = await signUp(api, 'owner');
    const guesser = '127.0.2.5';
    const owner = '127.0.2.6';
    freeze();
    for (let i = 0; i < 5; i++) expect(outcome(await signIn(guesser, victim.email, WRONG))).toBe('401 invalid_credentials');
    expect(outcome(await signIn(guesser, victim.email, WRONG))).toBe('429 rate_limited 1');
    expect(outcome(await signIn(owner, victim.email, victim.password))).toBe('200');
    // A guesser that keeps its network at the longest back-off, each guess sent when Retry-After says.
    await seedNetwork(victim.email, guesser, { fails: 40, until: Date.now() + 900_000 });
    expect(outcome(await signIn(guesser, victim.email, victim.password))).toBe('429 rate_limited 900');
    expect(outcome(await signIn(owner, victim.email, victim.password))).toBe('200');
    // The owner's successes reset only the owner's network.
    expect(outcome(await signIn(guesser, victim.email, WRONG))).toBe('429 rate_limited 900');
  });

  it('takes no more than 100 failures in any 60 minutes, from whatever networks', async () => {
    const victim = await signUp(api, 'hourly');
    const ip = '127.0.2.4';
    freeze();
    const now = Date.now();
    // 100 failures in the last hour, the oldest 59 minutes ago, and no back-off running on any network.
    const recent = Array.from({ length: 100 }, (_, i) => (now - 59 * 60_000 + i * 1000) * 1000 + i);
    await seedHourly(victim.email, recent);
    expect(outcome(await signIn(ip, victim.email, victim.password))).toBe('429 rate_limited 60');
    expect(outcome(await signIn('127.0.2.7', victim.email, victim.password))).toBe('429 rate_limited 60');
    advance(60_000);
    expect(outcome(await signIn(ip, victim.email, victim.password))).toBe('200');
  });

  it('evaluates at most 5 per network of 200 concurrent wrong passwords for one account, with no 5xx (A5)', async () => {
    const victim = await signUp(api, 'race');
    freeze();
    // 10 addresses × 20 requests: every per-IP bucket has room, so only the account limits bind.
    const replies = await Promise.all(Array.from({ length: 200 }, (_, i) => signIn(`127.0.3.${1 + (i % 10)}`, victim.email, WRONG)));
    const counts = tally(replies);
    expect(
      replies.filter((r) => r.status >= 500),
      JSON.stringify(counts),
    ).toEqual([]);
    for (let n = 0; n < 10; n++) {
      const fromNetwork = tally(replies.filter((_, i) => i % 10 === n));
      expect(fromNetwork['401 invalid_credentials'] ?? 0, `127.0.3.${1 + n}`).toBeLessThanOrEqual(config.accountFreeFailures);
      expect(fromNetwork, `127.0.3.${1 + n}`).toEqual({ '401 invalid_credentials': 5, '429 rate_limited 1': 15 });
    }
    expect(outcome(await signIn('127.0.3.1', victim.email, victim.password))).toBe('429 rate_limited 1');
    // 50 failures are under the hourly cap: the owner on a network of its own signs in.
    expect(outcome(await signIn('127.0.3.11', victim.email, victim.password))).toBe('200');
  });

  it('evaluates exactly 100 of 200 concurrent wrong passwords from 40 networks: the hourly cap binds (A3, A5)', async () => {
    const victim = await signUp(api, 'spread');
    freeze();
    // 40 addresses × 5 requests: within every network's free failures, so only the hourly cap binds.
    const replies = await Promise.all(Array.from({ length: 200 }, (_, i) => signIn(`127.0.7.${1 + (i % 40)}`, victim.email, WRONG)));
    const counts = tally(replies);
    expect(
      replies.filter((r) => r.status >= 500),
      JSON.stringify(counts),
    ).toEqual([]);
    expect(counts['401 invalid_credentials'], JSON.stringify(counts)).toBe(config.accountHourlyFailures);
    expect(
      Object.keys(counts).filter((k) => !['401 invalid_credentials', '429 rate_limited 3600', '429 rate_limited 1'].includes(k)),
    ).toEqual([]);
    // The accepted trade-off: the owner, on a network of its own, waits until the first of them is an hour old.
    expect(outcome(await signIn('127.0.7.41', victim.email, victim.password))).toBe('429 rate_limited 3600');
    advance(3_600_000);
    expect(outcome(await signIn('127.0.7.41', victim.email, victim.password))).toBe('200');
  });
});

describe('per-IP buckets (A4, A6)', () => {
  it('sign-in: 30 attempts per address, whatever the e-mails, then 429; one more per 10 s; other addresses unaffected', async () => {
    const ip = '127.0.4.1';
    freeze();
    const first = await batched(30, 10, () => signIn(ip, freshEmail('stuffing'), WRONG));
    expect(tally(first)).toEqual({ '401 invalid_credentials': 30 });
    expect(outcome(await signIn(ip, freshEmail('stuffing'), WRONG))).toBe('429 rate_limited 10');

    // Forwarding headers are the client's word: they change nothing (A6).
    for (const [i, headers] of (
      [
        { 'x-forwarded-for': '198.51.100.1' },
        { 'x-real-ip': '198.51.100.2' },
        { forwarded: 'for=198.51.100.3' },
        { 'x-forwarded-for': '198.51.100.4, 127.0.4.2', 'x-real-ip': '198.51.100.4', forwarded: 'for="[2001:db8::1]"' },
      ] as Record<string, string>[]
    ).entries()) {
      expect(outcome(await signIn(ip, freshEmail(`spoof${i}`), WRONG, headers))).toBe('429 rate_limited 10');
    }
    expect(outcome(await signIn('127.0.4.2', freshEmail('elsewhere'), WRONG))).toBe('401 invalid_credentials');

    advance(10_000);
    expect(outcome(await signIn(ip, freshEmail('stuffing'), WRONG))).toBe('401 invalid_credentials');
    expect(outcome(await signIn(ip, freshEmail('stuffing'), WRONG))).toBe('429 rate_limited 10');

    // Sign-up has its own bucket.
    const signup = await post(ip, '/api/auth/signup', {
      email: freshEmail('own-bucket'),
      password: 'a long enough secret',
      firstName: 'A',
      lastName: 'B',
    });
    expect(signup.status).toBe(201);
  });

  it('sign-up: 100 accounts per address at once (an office onboarding), then 429 with Retry-After; other addresses unaffected', async () => {
    const ip = '127.0.4.3';
    const body = () => ({ email: freshEmail('spam'), password: 'a long enough secret', firstName: 'S', lastName: 'P' });
    freeze();
    const first = await batched(100, 6, () => post(ip, '/api/auth/signup', body()));
    expect(tally(first)).toEqual({ '201': 100 });
    // 300 an hour: one more every 12 s.
    expect(outcome(await post(ip, '/api/auth/signup', body()))).toBe('429 rate_limited 12');
    expect(outcome(await post(ip, '/api/auth/signup', body(), { 'x-forwarded-for': '198.51.100.9' }))).toBe('429 rate_limited 12');
    expect((await post('127.0.4.4', '/api/auth/signup', body())).status).toBe(201);
  });
});

const PASSWORD = 'correct horse battery staple';

/**
 * Writes `count` users whose password is PASSWORD, hashed with argon2id at its lowest cost (the
 * stored PHC string carries its parameters, so sign-in verifies it in about a millisecond):
 * hundreds of sign-ins stay fast while every request still runs the real code.
 */
const seedUsers = async (count: number, name: string): Promise<{ email: string; uuid: string }[]> => {
  const nonce = randomBytes(16);
  const hash = argon2Sync('argon2id', { message: PASSWORD, nonce, memory: 64, passes: 1, parallelism: 1, tagLength: 32 });
  const b64 = (bytes: Buffer) => bytes.toString('base64').replace(/=+$/, '');
  const passwordHash = `$argon2id$v=19$m=64,t=1,p=1$${b64(nonce)}$${b64(hash)}`;
  const now = new Date();
  const users = Array.from({ length: count }, () => ({ email: freshEmail(name), uuid: randomUUID() }));
  await db()
    .entities.user.put(
      users.map((u) => ({
        userUuid: u.uuid,
        userId: newId(now),
        email: u.email,
        firstName: name,
        lastName: 'Seeded',
        passwordHash,
        createdAt: now.toISOString(),
        updatedAt: now.toISOString(),
      })),
    )
    .go();
  await db()
    .entities.emailClaim.put(users.map((u) => ({ email: u.email, userUuid: u.uuid })))
    .go();
  return users;
};

// A thousand sign-ins and refreshes through one emulator: over three minutes on a loaded two-core machine.
describe('one address, many people (a NAT)', { timeout: 600_000 }, () => {
  it('lets 500 users sign in and refresh from one IP, and still stops the 31st wrong password after them', async () => {
    const ip = '127.0.9.1';
    const users = await seedUsers(500, 'office');
    const signIns = await batched(500, 10, (i) => signIn(ip, (users[i] as { email: string }).email, PASSWORD));
    expect(tally(signIns)).toEqual({ '200': 500 });
    // Refreshes are limited per session, never per address.
    const refreshes = await batched(500, 10, (i) =>
      post(ip, '/api/auth/refresh', { refresh_token: signIns[i]?.body.data.session.refresh_token }),
    );
    expect(tally(refreshes)).toEqual({ '200': 500 });
    freeze();
    const guesses = await batched(40, 10, () => signIn(ip, freshEmail('stuffing'), WRONG));
    expect(tally(guesses)).toEqual({ '401 invalid_credentials': 30, '429 rate_limited 10': 10 });
  });

  it('successes interleaved with guesses buy the guesser nothing: still exactly 30 wrong passwords', async () => {
    const ip = '127.0.9.2';
    const users = await seedUsers(200, 'mixed');
    freeze();
    const people: Reply[][] = [];
    const guesses: Reply[] = [];
    // 40 rounds: 5 users signing in at once, then one guess.
    for (let round = 0; round < 40; round++) {
      people.push(await Promise.all(users.slice(round * 5, round * 5 + 5).map((u) => signIn(ip, u.email, PASSWORD))));
      guesses.push(await signIn(ip, freshEmail('guess'), WRONG));
    }
    expect(tally(guesses)).toEqual({ '401 invalid_credentials': 30, '429 rate_limited 10': 10 });
    expect(guesses.slice(0, 30).every((r) => r.status === 401)).toBe(true);
    // Everyone got in while the guesses left the 5 tokens a round needs (the first 26 rounds);
    // once a guesser has emptied the address's bucket, it is empty for everyone there.
    expect(tally(people.slice(0, 26).flat())).toEqual({ '200': 130 });
  });

  it('gives the address its token back when the account limits refused (no password was checked)', async () => {
    const ip = '127.0.9.3';
    const [victim] = await seedUsers(1, 'backedoff');
    freeze();
    await seedNetwork(victim?.email as string, ip, { fails: 40, until: Date.now() + 900_000 });
    const refused = await batched(40, 10, () => signIn(ip, victim?.email as string, PASSWORD));
    expect(tally(refused)).toEqual({ '429 rate_limited 900': 40 });
    const guesses = await batched(31, 10, () => signIn(ip, freshEmail('after'), WRONG));
    expect(tally(guesses)).toEqual({ '401 invalid_credentials': 30, '429 rate_limited 10': 1 });
  });

  it('lets 40 users behind one IP change their password (the bucket is per user)', async () => {
    const ip = '127.0.9.4';
    const users = await seedUsers(40, 'changer');
    const sessions = await batched(40, 10, (i) => signIn(ip, (users[i] as { email: string }).email, PASSWORD));
    const changes = await batched(
      40,
      5,
      (i) =>
        new Promise<Reply>((resolve, reject) => {
          const url = new URL('/api/auth/user', api.url);
          const req = request(
            url,
            {
              method: 'PUT',
              localAddress: ip,
              agent: false,
              headers: { 'content-type': 'application/json', authorization: `Token ${sessions[i]?.body.data.session.access_token}` },
            },
            (res) => {
              res.resume();
              res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: new Headers(), body: undefined }));
            },
          );
          req.on('error', reject);
          req.end(JSON.stringify({ currentPassword: PASSWORD, password: 'a brand new passphrase' }));
        }),
    );
    expect(changes.map((r) => r.status)).toEqual(Array(40).fill(200));
  });
});

describe('when the limiter cannot reach DynamoDB', () => {
  it('fails closed: 503 with Retry-After, for the right password too', async () => {
    const user = await signUp(api, 'closed');
    const send = DynamoDBDocumentClient.prototype.send;
    vi.spyOn(DynamoDBDocumentClient.prototype, 'send').mockImplementation(function (this: DynamoDBDocumentClient, ...args: unknown[]) {
      const key = (args[0] as { input?: { Key?: { pk?: unknown } } }).input?.Key?.pk;
      // Only the limiter's items (ElectroDB keys them `$roster#scope_…`) are out of reach.
      if (typeof key === 'string' && key.startsWith('$roster#scope_')) return Promise.reject(new Error('connect ECONNREFUSED'));
      return (send as (...a: unknown[]) => Promise<unknown>).apply(this, args);
    } as never);
    const res = await signIn('127.0.5.1', user.email, user.password);
    expect(outcome(res)).toBe('503 unavailable 1');
    expect(JSON.stringify(res.body)).not.toMatch(/ECONNREFUSED|roster|scope/);
    const signup = await post('127.0.5.1', '/api/auth/signup', {
      email: freshEmail(),
      password: 'a long enough secret',
      firstName: 'A',
      lastName: 'B',
    });
    expect(outcome(signup)).toBe('503 unavailable 1');
    vi.restoreAllMocks();
    expect(outcome(await signIn('127.0.5.1', user.email, user.password))).toBe('200');
  });
});

describe('common passwords at sign-up', () => {
  it('refuses the most common passwords with 422 on `password`, and takes a strong passphrase', async () => {
    const ip = '127.0.6.1';
    for (const password of ['password', '12345678', 'qwerty123', 'PASSWORD']) {
      const res = await post(ip, '/api/auth/signup', { email: freshEmail('common'), password, firstName: 'C', lastName: 'P' });
      expect(res.status, password).toBe(422);
      expect(res.body.error.code).toBe('validation_failed');
      expect(Object.keys(res.body.error.fields)).toEqual(['password']);
    }
    const strong = await post(ip, '/api/auth/signup', {
      email: freshEmail('strong'),
      password: 'plaid walrus orbits quietly',
      firstName: 'S',
      lastName: 'P',
    });
    expect(strong.status).toBe(201);
  });
});
