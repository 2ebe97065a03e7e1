/**
 * The limiters of lib/limits/ (SECURITY-TESTS.md 1.2, A3–A5): its decisions as pure
 * functions, then its conditional writes against this file's DynamoDB Local table, with time
 * passed in explicitly. Password attempts back off per (account, source network) and are capped
 * per account across every network.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { freePort } from '#infra/dynamodb-local.ts';
import { accountSubject } from '#lib/limits/account-key.ts';
import { planHourly } from '#lib/limits/hourly-cap.ts';
import {
  ACCOUNT_LIMITS,
  type AccountSettings,
  checkPasswordAttempt,
  limitPasswordChange,
  recordPasswordSuccess,
} from '#lib/limits/password-attempts.ts';
import { accountNetworkSubject, backoffSeconds, planBackoff } from '#lib/limits/password-backoff.ts';
import { REFRESH_LIMITS } from '#lib/limits/session-refresh.ts';
import { SIGNIN_LIMITS, SIGNUP_LIMITS, clientNetwork, ipSubject, limitSignIn, limitSignUp } from '#lib/limits/source-network.ts';
import { type BucketSettings, bucketTimes, giveBack, planBucket } from '#lib/limits/token-bucket.ts';
import { config } from '#lib/core/config.ts';
import { createDocumentClient } from '#lib/db/client.ts';
import { createDb, db } from '#lib/db/service.ts';
import { AppError } from '#lib/core/errors.ts';

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

/** The account's item: its hourly `recent` set, from every network. */
const stored = async (email: string) =>
  (
    await db()
      .entities.rateLimit.get({ scope: 'account', subject: accountSubject(email) })
      .go({ consistent: true })
  ).data;

/** The (account, network) item: consecutive failures and back-off. */
const storedNet = async (email: string, ip: string) =>
  (
    await db()
      .entities.rateLimit.get({ scope: 'account-net', subject: accountNetworkSubject(email, ip) })
      .go({ consistent: true })
  ).data;

describe('defaults', () => {
  it("are the issue's: 5 free failures, 1 s doubling to 15 min, 100 an hour; 30 per IP refilling 30 per 5 min", () => {
    expect(ACCOUNT_LIMITS).toEqual({ freeFailures: 5, backoffSeconds: 1, backoffMaxSeconds: 900, hourlyFailures: 100 });
    expect(SIGNIN_LIMITS).toEqual({ burst: 30, refill: 30, refillSeconds: 300 });
    // Sign-up: a company onboarding its staff from one office; refresh: per session, a few a minute.
    expect(SIGNUP_LIMITS).toEqual({ burst: 100, refill: 300, refillSeconds: 3600 });
    expect(REFRESH_LIMITS).toEqual({ burst: 5, refill: 5, refillSeconds: 60 });
    expect(config.maxSessionsPerUser).toBe(100);
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

/**
 * The sign-in bucket's writes as DynamoDB applies them (lib/limits/token-bucket.ts): a reservation takes a
 * token (an idle write starts a new epoch), a give-back returns it within its epoch only.
 * `unconditioned` models the naive give-back (ADD tat -T whatever happened since).
 */
class BucketModel {
  tat: number | undefined;
  epoch = 0;
  readonly s: BucketSettings;
  readonly unconditioned: boolean;
  constructor(s: BucketSettings, unconditioned = false) {
    this.s = s;
    this.unconditioned = unconditioned;
  }
  /** The reservation's epoch, or null when refused. */
  reserve(now: number): number | null {
    const plan = planBucket(this.tat, now, this.s);
    if (plan.kind === 'limited') return null;
    const { interval } = bucketTimes(this.s);
    if (plan.kind === 'idle') {
      this.tat = now + interval;
      this.epoch++;
    } else this.tat = (this.tat as number) + interval;
    return this.epoch;
  }
  giveBack(epoch: number): void {
    if (this.tat !== undefined && (this.unconditioned || epoch === this.epoch)) this.tat -= bucketTimes(this.s).interval;
  }
}

interface Step {
  gap: number;
  kind: 'guess' | 'success';
  /** How long a success holds its token before giving it back (its sign-in's duration). */
  hold: number;
}

/** Runs the steps in time order (a give-back due at a step's time goes first); answers what happened. */
const simulate = (model: BucketModel, steps: Step[]) => {
  const guesses: number[] = [];
  const refusedSuccessesOutstanding: number[] = [];
  const due: { at: number; epoch: number }[] = [];
  let t = 0;
  const settle = (until: number) => {
    due.sort((a, b) => a.at - b.at);
    while (due.length > 0 && (due[0] as { at: number }).at <= until) model.giveBack((due.shift() as { epoch: number }).epoch);
  };
  for (const step of steps) {
    t += step.gap;
    settle(t);
    const epoch = model.reserve(t);
    if (step.kind === 'guess') {
      if (epoch !== null) guesses.push(t);
    } else if (epoch === null) refusedSuccessesOutstanding.push(due.length);
    else due.push({ at: t + step.hold, epoch });
  }
  return { guesses, refusedSuccessesOutstanding };
};

/**
 * The GCRA bound, its window stretched by the longest hold: admitted guesses in any [a, b] are at
 * most burst + floor((b - a + maxHold) / T).
 */
const withinBound = (guesses: number[], s: BucketSettings, maxHold: number): boolean => {
  const { interval } = bucketTimes(s);
  for (let i = 0; i < guesses.length; i++) {
    for (let j = i; j < guesses.length; j++) {
      if (j - i + 1 > s.burst + Math.floor(((guesses[j] as number) - (guesses[i] as number) + maxHold) / interval)) return false;
    }
  }
  return true;
};

describe('giving sign-in tokens back (a model of the writes)', () => {
  const s = { burst: 3, refill: 1, refillSeconds: 1 };
  const steps = (maxHold: number, kinds: Step['kind'][] = ['guess', 'success']) =>
    fc.array(
      fc.record({ gap: fc.integer({ min: 0, max: 2500 }), kind: fc.constantFrom(...kinds), hold: fc.integer({ min: 0, max: maxHold }) }),
      { maxLength: 80 },
    );

  it('with no successes, is plain GCRA: never more than burst + floor(window / T) guesses', () => {
    fc.assert(fc.property(steps(0, ['guess']), (run) => withinBound(simulate(new BucketModel(s), run).guesses, s, 0)));
  });

  it('interleaving successes buys no more guesses than GCRA allows in the window stretched by the longest hold', () => {
    for (const maxHold of [0, 200, 999, 3000]) {
      fc.assert(
        fc.property(steps(maxHold), (run) => withinBound(simulate(new BucketModel(s), run).guesses, s, maxHold)),
        { numRuns: 500 },
      );
    }
  });

  it('unlike the naive give-back (no epoch condition): a success held across an idle write gifts it a guess', () => {
    const run: Step[] = [
      { gap: 0, kind: 'success', hold: 2500 }, // reserved at 0 (tat 1000), given back at 2500
      { gap: 2000, kind: 'guess', hold: 0 }, // the bucket is idle: tat = 3000, a new epoch
      { gap: 0, kind: 'guess', hold: 0 },
      { gap: 0, kind: 'guess', hold: 0 },
      { gap: 500, kind: 'guess', hold: 0 }, // after the give-back at 2500
    ];
    expect(simulate(new BucketModel(s, true), run).guesses).toEqual([2000, 2000, 2000, 2500]);
    expect(simulate(new BucketModel(s), run).guesses).toEqual([2000, 2000, 2000]);
    // Four guesses in half a second from a bucket of three: the success's token paid for one.
    expect(withinBound([2000, 2000, 2000, 2500], s, 0)).toBe(false);
  });

  it('refuses a success only while `burst` reservations are out: people are never counted', () => {
    fc.assert(
      fc.property(steps(3000, ['success']), (run) =>
        simulate(new BucketModel(s), run).refusedSuccessesOutstanding.every((out) => out >= s.burst),
      ),
      { numRuns: 500 },
    );
  });
});

describe('backoffSeconds', () => {
  it('is 0 for the first 4 failures, then 1 s doubling up to 15 minutes', () => {
    const waits = Array.from({ length: 20 }, (_, i) => backoffSeconds(i + 1, ACCOUNT_LIMITS));
    expect(waits).toEqual([0, 0, 0, 0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 900, 900, 900, 900, 900, 900]);
    expect(backoffSeconds(10_000, ACCOUNT_LIMITS)).toBe(900);
  });
});

describe('planBackoff (per account and network)', () => {
  const s = ACCOUNT_LIMITS;

  it('admits the free failures without reading, then starts the back-off on the fifth', () => {
    expect(planBackoff({}, T0, s)).toEqual({ kind: 'free' });
    expect(planBackoff({ fails: 3 }, T0, s)).toEqual({ kind: 'free' });
    expect(planBackoff({ fails: 4 }, T0, s)).toEqual({ kind: 'backoff', fails: 4, until: T0 + 1000 });
    expect(planBackoff({ fails: 9, until: T0 }, T0, s)).toEqual({ kind: 'backoff', fails: 9, until: T0 + 32_000 });
  });

  it('refuses within the back-off, with the time left', () => {
    expect(planBackoff({ fails: 5, until: T0 + 1000 }, T0, s)).toEqual({ kind: 'limited', waitMs: 1000 });
    expect(planBackoff({ fails: 5, until: T0 + 1000 }, T0 + 999, s)).toEqual({ kind: 'limited', waitMs: 1 });
  });

  it('forgets a state past its ttl', () => {
    expect(planBackoff({ fails: 40, until: T0 + 1000, ttl: T0 / 1000 }, T0, s)).toEqual({ kind: 'reset', until: 0 });
  });
});

describe('planHourly (per account, every network)', () => {
  const s = ACCOUNT_LIMITS;
  const stamp = (ms: number, nonce = 0) => ms * 1000 + nonce;

  it('adds below the cap, without reading', () => {
    expect(planHourly(undefined, T0, s)).toEqual({ kind: 'add' });
    expect(
      planHourly(
        Array.from({ length: 99 }, (_, i) => stamp(T0, i)),
        T0,
        s,
      ),
    ).toEqual({ kind: 'add' });
  });

  it('caps failures in any 60 minutes (a sliding window) and says when the oldest leaves it', () => {
    const recent = Array.from({ length: 100 }, (_, i) => stamp(T0 - 59 * 60_000 + i * 1000, i));
    expect(planHourly(recent, T0, s)).toEqual({ kind: 'limited', waitMs: 60_000 });
    expect(planHourly(recent.slice(1), T0, s)).toEqual({ kind: 'add' });
    // An hour after the oldest, the full set first loses its stale entries.
    expect(planHourly(recent, T0 + 60_000, s)).toEqual({ kind: 'prune', stale: [recent[0]] });
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

  it('keeps sign-in and sign-up apart, one address apart from another, and password changes per user', async () => {
    const ip = freshIp();
    const s = { burst: 2, refill: 2, refillSeconds: 60 };
    expect([await outcome(limitSignIn(db(), ip, at(0), s)), await outcome(limitSignIn(db(), ip, at(0), s))]).toEqual(['ok', 'ok']);
    expect(await outcome(limitSignIn(db(), ip, at(0), s))).toBe('rate_limited 30');
    expect(await outcome(limitSignUp(db(), ip, at(0), s))).toBe('ok');
    const user = randomUUID();
    expect(await outcome(limitPasswordChange(db(), user, at(0), s))).toBe('ok');
    expect(await outcome(limitPasswordChange(db(), user, at(0), s))).toBe('ok');
    expect(await outcome(limitPasswordChange(db(), user, at(0), s))).toBe('rate_limited 30');
    expect(await outcome(limitPasswordChange(db(), randomUUID(), at(0), s))).toBe('ok');
    expect(await outcome(limitSignIn(db(), freshIp(), at(0), s))).toBe('ok');
  });

  it('never admits more than the bucket holds under 150 concurrent requests', async () => {
    const ip = freshIp();
    const s = { burst: 10, refill: 10, refillSeconds: 300 };
    const results = await Promise.all(Array.from({ length: 150 }, () => outcome(limitSignUp(db(), ip, at(0), s))));
    expect(tally(results)).toEqual({ ok: 10, 'rate_limited 30': 140 });
  });
});

describe('giving sign-in tokens back in DynamoDB', () => {
  const tatOf = async (ip: string) =>
    (
      await db()
        .entities.rateLimit.get({ scope: 'signin-ip', subject: ipSubject(ip) })
        .go({ consistent: true })
    ).data?.tat;

  it('lets 500 successes through one address at once, 20 at a time, and still stops the 31st guess', async () => {
    const ip = freshIp();
    for (let start = 0; start < 500; start += 20) {
      const tokens = await Promise.all(Array.from({ length: 20 }, () => limitSignIn(db(), ip, at(0))));
      await Promise.all(tokens.map((token) => giveBack(db(), token)));
    }
    expect(await tatOf(ip)).toBe(T0);
    const guesses = await Promise.all(Array.from({ length: 40 }, () => outcome(limitSignIn(db(), ip, at(0)))));
    expect(tally(guesses)).toEqual({ ok: 30, 'rate_limited 10': 10 });
  });

  it('interleaved with guesses, gives back exactly its own token', async () => {
    const ip = freshIp();
    const success = await limitSignIn(db(), ip, at(0));
    for (let i = 0; i < 29; i++) expect(await outcome(limitSignIn(db(), ip, at(0)))).toBe('ok');
    expect(await outcome(limitSignIn(db(), ip, at(0)))).toBe('rate_limited 10');
    await giveBack(db(), success);
    expect(await outcome(limitSignIn(db(), ip, at(0)))).toBe('ok');
    expect(await outcome(limitSignIn(db(), ip, at(0)))).toBe('rate_limited 10');
  });

  it('gives nothing back once the bucket went idle in between (that idle write forgave the token)', async () => {
    const ip = freshIp();
    const held = await limitSignIn(db(), ip, at(0));
    // 20 s later the bucket is full again: the next guess starts a new epoch.
    expect(await outcome(limitSignIn(db(), ip, at(20_000)))).toBe('ok');
    await giveBack(db(), held);
    expect(await tatOf(ip)).toBe(T0 + 30_000);
    const guesses = await Promise.all(Array.from({ length: 35 }, () => outcome(limitSignIn(db(), ip, at(20_000)))));
    expect(tally(guesses)).toEqual({ ok: 29, 'rate_limited 10': 6 });
  });

  it('gives back a token of an item written before epochs existed', async () => {
    const ip = freshIp();
    await db()
      .entities.rateLimit.update({ scope: 'signin-ip', subject: ipSubject(ip) })
      .set({ tat: T0 + 5000, ttl: T0 / 1000 + 600 })
      .go();
    const token = await limitSignIn(db(), ip, at(0));
    expect(token.epoch).toBeUndefined();
    expect(await tatOf(ip)).toBe(T0 + 15_000);
    await giveBack(db(), token);
    expect(await tatOf(ip)).toBe(T0 + 5000);
  });

  it('creates nothing when the item is gone', async () => {
    const ip = freshIp();
    await giveBack(db(), { scope: 'signin-ip', subject: ipSubject(ip), epoch: 1, interval: 10_000 });
    expect(await tatOf(ip)).toBeUndefined();
  });
});

describe('password attempts in DynamoDB', () => {
  it('admits 5 from a network, then backs it off 1 s, 2 s, 4 s ... up to 15 minutes', async () => {
    const email = freshEmail();
    const ip = freshIp();
    let t = 0;
    for (let i = 0; i < 5; i++) expect(await outcome(checkPasswordAttempt(db(), email, ip, at(t)))).toBe('ok');
    const waits: number[] = [];
    for (let i = 0; i < 13; i++) {
      const refused = await outcome(checkPasswordAttempt(db(), email, ip, at(t)));
      const wait = Number(refused.split(' ')[1]);
      waits.push(wait);
      expect(await outcome(checkPasswordAttempt(db(), email, ip, at(t + wait * 1000 - 1)))).toBe(`rate_limited 1`);
      t += wait * 1000;
      expect(await outcome(checkPasswordAttempt(db(), email, ip, at(t)))).toBe('ok');
    }
    expect(waits).toEqual([1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 900, 900, 900]);
    expect(await storedNet(email, ip)).toMatchObject({ fails: 18, until: T0 + t + 900_000 });
    // Every admitted attempt is in the account's hourly count; the refused ones are not.
    expect((await stored(email))?.recent).toHaveLength(18);
  });

  it('counts an unknown or known e-mail by its normalised form', async () => {
    const email = freshEmail();
    const ip = freshIp();
    for (let i = 0; i < 5; i++) await checkPasswordAttempt(db(), i % 2 ? `  ${email.toUpperCase()} ` : email, ip, at(0));
    expect(await outcome(checkPasswordAttempt(db(), email, ip, at(0)))).toBe('rate_limited 1');
  });

  it("keeps a network's back-off to that network: another network is admitted meanwhile", async () => {
    const email = freshEmail();
    const guesser = freshIp();
    let t = 0;
    // The guesser keeps its network at the longest back-off, each wrong guess sent the moment Retry-After says.
    for (let i = 0; i < 5; i++) await checkPasswordAttempt(db(), email, guesser, at(t));
    for (let i = 0; i < 14; i++) {
      const wait = Number((await outcome(checkPasswordAttempt(db(), email, guesser, at(t)))).split(' ')[1]);
      t += wait * 1000;
      expect(await outcome(checkPasswordAttempt(db(), email, guesser, at(t)))).toBe('ok');
    }
    expect(await outcome(checkPasswordAttempt(db(), email, guesser, at(t)))).toBe('rate_limited 900');
    // The owner, on another network, is admitted at once, and has its own 5 free failures.
    const owner = freshIp();
    for (let i = 0; i < 5; i++) expect(await outcome(checkPasswordAttempt(db(), email, owner, at(t))), `owner ${i + 1}`).toBe('ok');
    expect(await outcome(checkPasswordAttempt(db(), email, owner, at(t)))).toBe('rate_limited 1');
    expect(await outcome(checkPasswordAttempt(db(), email, guesser, at(t + 899_999)))).toBe('rate_limited 1');
  });

  it('takes an IPv6 /64 as one network', async () => {
    const email = freshEmail();
    for (let i = 0; i < 5; i++) await checkPasswordAttempt(db(), email, `2001:db8:7:7::${i + 1}`, at(0));
    expect(await outcome(checkPasswordAttempt(db(), email, '2001:db8:7:7:ffff:1:2:3', at(0)))).toBe('rate_limited 1');
    expect(await outcome(checkPasswordAttempt(db(), email, '2001:db8:7:8::1', at(0)))).toBe('ok');
  });

  it('forgets the consecutive failures of the succeeding network only, and not the hourly count', async () => {
    const email = freshEmail();
    const owner = freshIp();
    const guesser = freshIp();
    const attempts = [];
    for (let i = 0; i < 5; i++) attempts.push(await checkPasswordAttempt(db(), email, owner, at(0)));
    for (let i = 0; i < 5; i++) await checkPasswordAttempt(db(), email, guesser, at(0));
    await recordPasswordSuccess(db(), attempts[4] as (typeof attempts)[number]);
    expect(await storedNet(email, owner)).toMatchObject({ fails: 0, until: 0 });
    expect(await storedNet(email, guesser)).toMatchObject({ fails: 5, until: T0 + 1000 });
    const recent = (await stored(email))?.recent;
    expect(recent).toHaveLength(9);
    expect(recent).not.toContain(attempts[4]?.stamp);
    expect(await outcome(checkPasswordAttempt(db(), email, guesser, at(0)))).toBe('rate_limited 1');
    for (let i = 0; i < 5; i++) expect(await outcome(checkPasswordAttempt(db(), email, owner, at(0)))).toBe('ok');
    expect(await outcome(checkPasswordAttempt(db(), email, owner, at(0)))).toBe('rate_limited 1');
  });

  it('never admits more than 100 failures in any 60 minutes from one network, and admits again as they age out', async () => {
    // A back-off of at most 1 s lets 100 failures fit into an hour.
    const s: AccountSettings = { freeFailures: 5, backoffSeconds: 1, backoffMaxSeconds: 1, hourlyFailures: 100 };
    const email = freshEmail();
    const ip = freshIp();
    let t = 0;
    for (let i = 0; i < 100; i++) {
      expect(await outcome(checkPasswordAttempt(db(), email, ip, at(t), s)), `attempt ${i + 1}`).toBe('ok');
      t += 1000;
    }
    // The first was admitted at 0: it leaves the window at 3600 s.
    expect(await outcome(checkPasswordAttempt(db(), email, ip, at(t), s))).toBe(`rate_limited ${3600 - t / 1000}`);
    expect(await outcome(checkPasswordAttempt(db(), email, ip, at(HOUR - 1), s))).toBe('rate_limited 1');
    expect(await outcome(checkPasswordAttempt(db(), email, ip, at(HOUR), s))).toBe('ok');
    expect(await outcome(checkPasswordAttempt(db(), email, ip, at(HOUR), s))).toBe('rate_limited 1');
    expect((await stored(email))?.recent).toHaveLength(100);
  });

  it("caps the account at 100 failures an hour across all networks, the owner's included", async () => {
    const email = freshEmail();
    const networks = Array.from({ length: 20 }, () => freshIp());
    // 20 networks, 5 free failures each, one per 30 s: the 100th at 49.5 minutes.
    let t = 0;
    for (const ip of networks) {
      for (let i = 0; i < 5; i++) {
        expect(await outcome(checkPasswordAttempt(db(), email, ip, at(t)))).toBe('ok');
        t += 30_000;
      }
    }
    t -= 30_000;
    const owner = freshIp();
    expect(await outcome(checkPasswordAttempt(db(), email, owner, at(t)))).toBe(`rate_limited ${(HOUR - t) / 1000}`);
    // A refused attempt leaves no count on its network: the owner keeps all 5 free failures.
    expect(await storedNet(email, owner)).toMatchObject({ fails: 0, until: 0 });
    expect(await outcome(checkPasswordAttempt(db(), email, owner, at(HOUR - 1)))).toBe('rate_limited 1');
    // The first failure leaves the window at 60 minutes: one place, taken by the owner.
    expect(await outcome(checkPasswordAttempt(db(), email, owner, at(HOUR)))).toBe('ok');
    expect(await outcome(checkPasswordAttempt(db(), email, freshIp(), at(HOUR)))).toBe('rate_limited 30');
    expect(await storedNet(email, owner)).toMatchObject({ fails: 1 });
  });

  it('evaluates exactly 5 of 100 concurrent attempts from one network', async () => {
    const email = freshEmail();
    const ip = freshIp();
    const results = await Promise.all(Array.from({ length: 100 }, () => outcome(checkPasswordAttempt(db(), email, ip, at(0)))));
    expect(tally(results)).toEqual({ ok: 5, 'rate_limited 1': 95 });
    expect(await storedNet(email, ip)).toMatchObject({ fails: 5, until: T0 + 1000 });
    expect((await stored(email))?.recent).toHaveLength(5);
  });

  it('evaluates exactly 5 per network of 200 concurrent attempts from 10 networks', async () => {
    const email = freshEmail();
    const networks = Array.from({ length: 10 }, () => freshIp());
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        outcome(checkPasswordAttempt(db(), email, networks[i % 10] as string, at(0))).then((o) => [i % 10, o] as const),
      ),
    );
    for (let n = 0; n < 10; n++)
      expect(tally(results.filter(([k]) => k === n).map(([, o]) => o)), `network ${n}`).toEqual({ ok: 5, 'rate_limited 1': 15 });
    expect((await stored(email))?.recent).toHaveLength(50);
  });

  it('evaluates exactly 100 of 200 concurrent attempts from 40 networks (the hourly cap binds)', async () => {
    const email = freshEmail();
    // 5 from each network: all within its free failures, so only the hourly cap binds.
    const networks = Array.from({ length: 40 }, () => freshIp());
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        outcome(checkPasswordAttempt(db(), email, networks[i % 40] as string, at(0))).then((o) => [i % 40, o] as const),
      ),
    );
    const counts = tally(results.map(([, o]) => o));
    expect(counts.ok).toBe(100);
    // The rest wait for their network's back-off (1 s) or for the cap (the oldest failure leaves the window in an hour).
    expect(Object.keys(counts).filter((k) => !['ok', 'rate_limited 1', 'rate_limited 3600'].includes(k))).toEqual([]);
    expect((await stored(email))?.recent).toHaveLength(100);
    for (let n = 0; n < 40; n++) {
      const admitted = results.filter(([k, o]) => k === n && o === 'ok').length;
      expect(admitted).toBeLessThanOrEqual(5);
      // A count the cap refused is taken back unless another attempt counted after it: never below the admitted ones.
      expect((await storedNet(email, networks[n] as string))?.fails ?? 0).toBeGreaterThanOrEqual(admitted);
    }
  });

  it('starts a network afresh once its state is past its ttl', async () => {
    const email = freshEmail();
    const ip = freshIp();
    await db()
      .entities.rateLimit.update({ scope: 'account-net', subject: accountNetworkSubject(email, ip) })
      .set({ fails: 40, until: T0 + 600_000, ttl: T0 / 1000 })
      .go();
    expect(await outcome(checkPasswordAttempt(db(), email, ip, at(0)))).toBe('ok');
    expect(await storedNet(email, ip)).toMatchObject({ fails: 1, until: 0 });
  });
});

describe('when DynamoDB cannot be reached', () => {
  it('fails closed with 503 and Retry-After', async () => {
    const down = createDb(createDocumentClient(`http://127.0.0.1:${await freePort()}`), config.tableName);
    expect(await outcome(limitSignIn(down, freshIp(), at(0)))).toBe('unavailable 1');
    expect(await outcome(limitSignUp(down, freshIp(), at(0)))).toBe('unavailable 1');
    expect(await outcome(limitPasswordChange(down, randomUUID(), at(0)))).toBe('unavailable 1');
    expect(await outcome(checkPasswordAttempt(down, freshEmail(), freshIp(), at(0)))).toBe('unavailable 1');
    const email = freshEmail();
    const ip = freshIp();
    expect(
      await outcome(recordPasswordSuccess(down, { subject: accountSubject(email), network: accountNetworkSubject(email, ip), stamp: 1 })),
    ).toBe('unavailable 1');
  });
});
