/**
 * The limiter of lib/auth/limits.ts (SECURITY-TESTS.md 1.2, A3–A5): its decisions as pure
 * functions, then its conditional writes against this file's DynamoDB Local table, with time
 * passed in explicitly.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { freePort } from '../../infra/dynamodb-local.ts';
import {
  ACCOUNT_LIMITS,
  type AccountSettings,
  accountSubject,
  backoffSeconds,
  bucketTimes,
  checkPasswordAttempt,
  clientNetwork,
  IP_LIMITS,
  ipSubject,
  limitRefresh,
  limitSignIn,
  limitSignUp,
  planAttempt,
  planBucket,
  recordPasswordSuccess,
} from '../../lib/auth/limits.ts';
import { config } from '../../lib/config.ts';
import { createDocumentClient } from '../../lib/db/client.ts';
import { createDb, db } from '../../lib/db/service.ts';
import { AppError } from '../../lib/errors.ts';

// These tests assume the default limits, whatever the shared test setup sets: config reads the
// environment once, when it is first imported, which happens after this.
vi.hoisted(() => {
  for (const name of Object.keys(process.env)) if (name.startsWith('RATE_LIMIT_')) Reflect.deleteProperty(process.env, name);
});

const T0 = Date.UTC(2026, 0, 2, 3, 4, 5);
const at = (ms: number): Date => new Date(T0 + ms);
const HOUR = 3_600_000;

/** What a limiter call did: 'ok', or the error code with its Retry-After. */
const outcome = async (call: Promise<unknown>): Promise<string> => {
  try {
    await call;
    return 'ok';
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    return `${error.code} ${error.headers?.['Retry-After'] ?? ''}`.trim();
  }
};

const tally = (outcomes: string[]): Record<string, number> => {
  const counts: Record<string, number> = {};
  for (const o of outcomes) counts[o] = (counts[o] ?? 0) + 1;
  return counts;
};

const freshEmail = () => `limits-${randomUUID()}@example.com`;
const freshIp = (() => {
  let n = 0;
  return () => `10.${Math.floor(++n / 250)}.${n % 250}.7`;
})();

const stored = async (email: string) =>
  (await db().entities.rateLimit.get({ scope: 'account', subject: accountSubject(email) }).go({ consistent: true })).data;

describe('defaults', () => {
  it('are the issue\'s: 5 free failures, 1 s doubling to 15 min, 100 an hour; 30 per IP refilling 30 per 5 min', () => {
    expect(ACCOUNT_LIMITS).toEqual({ freeFailures: 5, backoffSeconds: 1, backoffMaxSeconds: 900, hourlyFailures: 100 });
    expect(IP_LIMITS).toEqual({ burst: 30, refill: 30, refillSeconds: 300 });
    expect(config.accountFreeFailures).toBe(5);
  });
});

describe('planBucket (GCRA)', () => {
  const s = { burst: 30, refill: 30, refillSeconds: 300 };

  it('spends one token per 10 s of tat, with 29 tokens of tolerance', () => {
    expect(bucketTimes(s)).toEqual({ interval: 10_000, tolerance: 290_000 });
  });

  it('is idle without an item or once tat has passed, busy within the tolerance, limited beyond', () => {
    expect(planBucket(undefined, T0, s)).toEqual({ kind: 'idle' });
    expect(planBucket(T0, T0, s)).toEqual({ kind: 'idle' });
    expect(planBucket(T0 + 1, T0, s)).toEqual({ kind: 'busy' });
    expect(planBucket(T0 + 290_000, T0, s)).toEqual({ kind: 'busy' });
    expect(planBucket(T0 + 300_000, T0, s)).toEqual({ kind: 'limited', waitMs: 10_000 });
  });

  it('allows exactly `burst` requests at once from a full bucket', () => {
    let tat: number | undefined;
    let admitted = 0;
    for (let i = 0; i < 100; i++) {
      const plan = planBucket(tat, T0, s);
      if (plan.kind === 'limited') continue;
      admitted++;
      tat = Math.max(tat ?? T0, T0) + 10_000;
    }
    expect(admitted).toBe(30);
  });
});

describe('backoffSeconds', () => {
  it('is 0 for the first 4 failures, then 1 s doubling up to 15 minutes', () => {
    const waits = Array.from({ length: 20 }, (_, i) => backoffSeconds(i + 1, ACCOUNT_LIMITS));
    expect(waits).toEqual([0, 0, 0, 0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 900, 900, 900, 900, 900, 900]);
    expect(backoffSeconds(10_000, ACCOUNT_LIMITS)).toBe(900);
  });
});

describe('planAttempt', () => {
  const s = ACCOUNT_LIMITS;
  const stamp = (ms: number, nonce = 0) => ms * 1000 + nonce;

  it('admits the free failures without reading, then starts the back-off on the fifth', () => {
    expect(planAttempt({}, T0, s)).toEqual({ kind: 'free' });
    expect(planAttempt({ fails: 3 }, T0, s)).toEqual({ kind: 'free' });
    expect(planAttempt({ fails: 4 }, T0, s)).toEqual({ kind: 'backoff', fails: 4, until: T0 + 1000 });
    expect(planAttempt({ fails: 9, until: T0 }, T0, s)).toEqual({ kind: 'backoff', fails: 9, until: T0 + 32_000 });
  });

  it('refuses within the back-off, with the time left', () => {
    expect(planAttempt({ fails: 5, until: T0 + 1000 }, T0, s)).toEqual({ kind: 'limited', waitMs: 1000 });
    expect(planAttempt({ fails: 5, until: T0 + 1000 }, T0 + 999, s)).toEqual({ kind: 'limited', waitMs: 1 });
  });

  it('caps failures in any 60 minutes (a sliding window) and says when the oldest leaves it', () => {
    const recent = Array.from({ length: 100 }, (_, i) => stamp(T0 - 59 * 60_000 + i * 1000, i));
    expect(planAttempt({ fails: 0, recent }, T0, s)).toEqual({ kind: 'limited', waitMs: 60_000 });
    expect(planAttempt({ fails: 0, recent: recent.slice(1) }, T0, s)).toEqual({ kind: 'free' });
    // An hour after the oldest, the full set first loses its stale entries.
    expect(planAttempt({ fails: 0, recent }, T0 + 60_000, s)).toEqual({ kind: 'prune', stale: [recent[0]] });
  });

  it('forgets a state past its ttl', () => {
    expect(planAttempt({ fails: 40, until: T0 + 1000, ttl: T0 / 1000 }, T0, s)).toEqual({ kind: 'reset', until: 0 });
  });
});

describe('clientNetwork', () => {
  it('keys IPv4 by address and IPv6 by its /64', () => {
    expect(clientNetwork('203.0.113.9')).toBe('203.0.113.9');
    expect(clientNetwork('::ffff:203.0.113.9')).toBe('203.0.113.9');
    expect(clientNetwork('2001:db8:1:2:3:4:5:6')).toBe('2001:db8:1:2::/64');
    expect(clientNetwork('2001:db8:1:2::ffff')).toBe('2001:db8:1:2::/64');
    expect(clientNetwork('2001:DB8:0001:0002:ffff::1')).toBe('2001:db8:1:2::/64');
    expect(clientNetwork('1::2:3:4:5:6:7')).toBe('1:0:2:3::/64');
    expect(clientNetwork('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(ipSubject('2001:db8:1:2::1')).toBe(ipSubject('2001:db8:1:2:ffff:ffff:ffff:ffff'));
    expect(ipSubject('2001:db8:1:2::1')).not.toBe(ipSubject('2001:db8:1:3::1'));
  });
});

describe('per-IP token buckets in DynamoDB', () => {
  it('admits 30 at once, then one per 10 s, and is full again after 5 minutes', async () => {
    const ip = freshIp();
    const first = await Promise.all(Array.from({ length: 40 }, () => outcome(limitSignIn(db(), ip, at(0)))));
    expect(tally(first)).toEqual({ ok: 30, 'rate_limited 10': 10 });
    expect(await outcome(limitSignIn(db(), ip, at(9_000)))).toBe('rate_limited 1');
    expect(await outcome(limitSignIn(db(), ip, at(10_000)))).toBe('ok');
    expect(await outcome(limitSignIn(db(), ip, at(10_000)))).toBe('rate_limited 10');
    const later = await Promise.all(Array.from({ length: 35 }, () => outcome(limitSignIn(db(), ip, at(10_000 + 300_000)))));
    expect(tally(later)).toEqual({ ok: 30, 'rate_limited 10': 5 });
  });

  it('keeps sign-in, sign-up and refresh apart, and one address apart from another', async () => {
    const ip = freshIp();
    const s = { burst: 2, refill: 2, refillSeconds: 60 };
    expect([await outcome(limitSignIn(db(), ip, at(0), s)), await outcome(limitSignIn(db(), ip, at(0), s))]).toEqual(['ok', 'ok']);
    expect(await outcome(limitSignIn(db(), ip, at(0), s))).toBe('rate_limited 30');
    expect(await outcome(limitSignUp(db(), ip, at(0), s))).toBe('ok');
    expect(await outcome(limitRefresh(db(), ip, at(0), s))).toBe('ok');
    expect(await outcome(limitSignIn(db(), freshIp(), at(0), s))).toBe('ok');
  });

  it('never admits more than the bucket holds under 150 concurrent requests', async () => {
    const ip = freshIp();
    const s = { burst: 10, refill: 10, refillSeconds: 300 };
    const results = await Promise.all(Array.from({ length: 150 }, () => outcome(limitRefresh(db(), ip, at(0), s))));
    expect(tally(results)).toEqual({ ok: 10, 'rate_limited 30': 140 });
  });
});

describe('per-account attempts in DynamoDB', () => {
  it('admits 5, then backs off 1 s, 2 s, 4 s ... up to 15 minutes', async () => {
    const email = freshEmail();
    let t = 0;
    for (let i = 0; i < 5; i++) expect(await outcome(checkPasswordAttempt(db(), email, at(t)))).toBe('ok');
    const waits: number[] = [];
    for (let i = 0; i < 13; i++) {
      const refused = await outcome(checkPasswordAttempt(db(), email, at(t)));
      const wait = Number(refused.split(' ')[1]);
      waits.push(wait);
      expect(await outcome(checkPasswordAttempt(db(), email, at(t + wait * 1000 - 1)))).toBe(`rate_limited 1`);
      t += wait * 1000;
      expect(await outcome(checkPasswordAttempt(db(), email, at(t)))).toBe('ok');
    }
    expect(waits).toEqual([1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 900, 900, 900]);
    expect(await stored(email)).toMatchObject({ fails: 18, until: T0 + t + 900_000 });
  });

  it('counts an unknown or known e-mail by its normalised form', async () => {
    const email = freshEmail();
    for (let i = 0; i < 5; i++) await checkPasswordAttempt(db(), i % 2 ? `  ${email.toUpperCase()} ` : email, at(0));
    expect(await outcome(checkPasswordAttempt(db(), email, at(0)))).toBe('rate_limited 1');
  });

  it('forgets the consecutive failures on a success, but not the hourly count', async () => {
    const email = freshEmail();
    const attempts = [];
    for (let i = 0; i < 5; i++) attempts.push(await checkPasswordAttempt(db(), email, at(0)));
    await recordPasswordSuccess(db(), attempts[4] as (typeof attempts)[number]);
    const after = await stored(email);
    expect(after).toMatchObject({ fails: 0, until: 0 });
    expect(after?.recent).toHaveLength(4);
    expect(after?.recent).not.toContain(attempts[4]?.stamp);
    for (let i = 0; i < 5; i++) expect(await outcome(checkPasswordAttempt(db(), email, at(0)))).toBe('ok');
    expect(await outcome(checkPasswordAttempt(db(), email, at(0)))).toBe('rate_limited 1');
  });

  it('never admits more than 100 failures in any 60 minutes, and admits again as they age out', async () => {
    // A back-off of at most 1 s lets 100 failures fit into an hour.
    const s: AccountSettings = { freeFailures: 5, backoffSeconds: 1, backoffMaxSeconds: 1, hourlyFailures: 100 };
    const email = freshEmail();
    let t = 0;
    for (let i = 0; i < 100; i++) {
      expect(await outcome(checkPasswordAttempt(db(), email, at(t), s)), `attempt ${i + 1}`).toBe('ok');
      t += 1000;
    }
    // The first was admitted at 0: it leaves the window at 3600 s.
    expect(await outcome(checkPasswordAttempt(db(), email, at(t), s))).toBe(`rate_limited ${3600 - t / 1000}`);
    expect(await outcome(checkPasswordAttempt(db(), email, at(HOUR - 1), s))).toBe('rate_limited 1');
    expect(await outcome(checkPasswordAttempt(db(), email, at(HOUR), s))).toBe('ok');
    expect(await outcome(checkPasswordAttempt(db(), email, at(HOUR), s))).toBe('rate_limited 1');
    expect((await stored(email))?.recent).toHaveLength(100);
  });

  it('evaluates exactly 5 of 100 concurrent attempts on one account', async () => {
    const email = freshEmail();
    const results = await Promise.all(Array.from({ length: 100 }, () => outcome(checkPasswordAttempt(db(), email, at(0)))));
    expect(tally(results)).toEqual({ ok: 5, 'rate_limited 1': 95 });
    expect(await stored(email)).toMatchObject({ fails: 5, until: T0 + 1000 });
  });

  it('starts afresh once the state is past its ttl', async () => {
    const email = freshEmail();
    await db()
      .entities.rateLimit.update({ scope: 'account', subject: accountSubject(email) })
      .set({ fails: 40, until: T0 + 600_000, recent: [T0 * 1000], ttl: T0 / 1000 })
      .go();
    expect(await outcome(checkPasswordAttempt(db(), email, at(0)))).toBe('ok');
    expect(await stored(email)).toMatchObject({ fails: 1, until: 0 });
  });
});

describe('when DynamoDB cannot be reached', () => {
  it('fails closed with 503 and Retry-After', async () => {
    const down = createDb(createDocumentClient(`http://127.0.0.1:${await freePort()}`), config.tableName);
    expect(await outcome(limitSignIn(down, freshIp(), at(0)))).toBe('unavailable 1');
    expect(await outcome(limitSignUp(down, freshIp(), at(0)))).toBe('unavailable 1');
    expect(await outcome(limitRefresh(down, freshIp(), at(0)))).toBe('unavailable 1');
    expect(await outcome(checkPasswordAttempt(down, freshEmail(), at(0)))).toBe('unavailable 1');
    expect(await outcome(recordPasswordSuccess(down, { subject: accountSubject(freshEmail()), stamp: 1 }))).toBe('unavailable 1');
  });
});
