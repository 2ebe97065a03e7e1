/**
 * Mail that survives database outages (issue 11, item 9). This file's own DynamoDB Local, keeping
 * its data in a directory so that it comes back with it on the same port; the local server's
 * handlers, the mailer on the stream poller and the outbox sweeper on its local timer, all against
 * it; a real SMTP server in this process as the transport. Invites are created without pause while
 * DynamoDB Local is killed (SIGKILL, then started again) five times and hung (SIGSTOP … SIGCONT)
 * once. Then: no message left unsent, every invitation mailed, duplicates no more than
 * the SENT writes that failed, and no 500. How soon the delivery lag recovers after each fault is
 * measured and logged (`outage figures`, its `windows`), not checked: it depends on the machine.
 *
 * The sweeper runs every 3 s with a 3 s grace period and a 5 s lease (OUTBOX_SWEEP_GRACE_MS,
 * OUTBOX_LEASE_MS), so that what it catches is caught within the test's minutes, not the deployed
 * minute and a half. The figures are logged as one line, `outage figures`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type DynamoDbLocal, ensureTable, freePort, startDynamoDbLocal } from '#infra/dynamodb-local.ts';
import { type TestUser, createTeam, freshEmail, signUp, useApi } from '../helpers/api.ts';
import { testSmtp } from '../helpers/smtp.ts';

const KILLS = 5;
/** The hang comes third, between kills. */
const HANG_AT = 2;
const HANG_MS = 5000;
/**
 * 5 s until issue 12, when each e-mail began to also store its link's token (one more write per
 * message): on the emulator the lag after a recovery now settles at 5–5.5 s instead of 3–4 s.
 */
const LAG_LIMIT_MS = 7000;
/** The lag of each window is measured on messages made from this long after the recovery. */
const RECOVERY_MS = 30_000;
/**
 * Load after each recovery before the next fault: some 30 s to recover, then a few seconds in which the
 * lag is measured, on messages made at least LAG_LIMIT_MS before the next fault (a later one may be
 * held up by it).
 */
const GAP_MS = 40_000;
const LAST_GAP_MS = 42_000;
const WORKERS = 4;

const smtpPort = await freePort();
const dynamoPort = await freePort();
const dynamoRoot = mkdtempSync(join(tmpdir(), 'roster-outage-'));
const dynamoDir = join(dynamoRoot, 'dynamodb');
let dynamo: DynamoDbLocal = await startDynamoDbLocal(dynamoDir, dynamoPort);
const tableName = process.env.TABLE_NAME as string;
await ensureTable(dynamo.endpoint, tableName);

// Read when the handlers, the mailer and the sweeper load, which is only after this.
Object.assign(process.env, {
  DYNAMODB_ENDPOINT: dynamo.endpoint,
  // This emulator serves this file alone: the deployed bounds (2 s a try, 3 tries) notice a hang.
  DYNAMODB_REQUEST_TIMEOUT_MS: '2000',
  DYNAMODB_CONNECT_TIMEOUT_MS: '1000',
  SMTP_URL: `smtp://127.0.0.1:${smtpPort}`,
  SMTP_TIMEOUT_MS: '2000',
  MAIL_FROM: 'Roster <noreply@roster.example.com>',
  PUBLIC_URL: 'https://roster.example.com',
  INVITE_MAILS_PER_TEAM_HOUR: '1000000',
  INVITE_MAILS_PER_USER_HOUR: '1000000',
  OUTBOX_LEASE_MS: '5000',
  OUTBOX_SWEEP_GRACE_MS: '3000',
});

const smtp = testSmtp(() => smtpPort);
const api = useApi();

/** When each mail arrived, by arrival order in the inbox (polled: within 20 ms). */
const arrivals: number[] = [];
const watch = setInterval(() => {
  while (arrivals.length < smtp.inbox.length) arrivals.push(Date.now());
}, 20);

const { log } = await import('#lib/core/log.ts');
const errors = vi.spyOn(log, 'error');
const infos = vi.spyOn(log, 'info');
const logged = (spy: typeof errors | typeof infos, prefix: string) =>
  spy.mock.calls.filter(([message]) => message.startsWith(prefix)).length;
/** How often each message id was logged with `message`. */
const perMessage = (calls: unknown[][], message: string, fieldsAt: number): Map<string, number> => {
  const counts = new Map<string, number>();
  for (const call of calls) {
    const id = (call[fieldsAt] as { messageId?: string } | undefined)?.messageId;
    if (call[0] === message && id) counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return counts;
};

let stopPoller: () => Promise<void>;
let stopSweeper: () => Promise<void>;
beforeAll(async () => {
  const { config } = await import('#lib/core/config.ts');
  // The settings above must have been read by now, not before.
  expect([config.dynamodbEndpoint, config.outboxLeaseMs, config.outboxSweepGraceMs]).toEqual([dynamo.endpoint, 5000, 3000]);
  await smtp.start();
  const { startStreamPoller } = await import('#infra/stream-poller.ts');
  const poller = await startStreamPoller({ endpoint: dynamo.endpoint, tableName, dataDir: process.env.DATA_DIR as string });
  stopPoller = poller.stop;
  const { startSchedule } = await import('#infra/schedules.ts');
  stopSweeper = startSchedule('outbox-sweep', 3000).stop;
});
afterAll(async () => {
  clearInterval(watch);
  await stopSweeper?.();
  await stopPoller?.();
  await smtp.stop();
  // SIGKILL ends it even if a failed run left it stopped.
  dynamo.stop();
  await gone(dynamo.pid);
  rmSync(dynamoRoot, { recursive: true, force: true });
});

const gone = async (pid: number) => {
  for (;;) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await sleep(20);
  }
};

interface Attempt {
  email: string;
  start: number;
  status: number;
  retryAfter: string | null;
}

interface Fault {
  kind: 'kill' | 'hang';
  at: number;
  recovered: number;
}

/** Creates invites one after another until `until()` says stop; a 503 waits its Retry-After. */
const inviteWithoutPause = async (owner: TestUser, slug: string, attempts: Attempt[], until: () => boolean) => {
  while (!until()) {
    const email = freshEmail('outage');
    const start = Date.now();
    const res = await api.call('POST', `/api/teams/${slug}/invites`, { token: owner.token, json: { email, role: 'MEMBER' } });
    attempts.push({ email, start, status: res.status, retryAfter: res.headers.get('retry-after') });
    await sleep(res.status === 503 ? Number(res.headers.get('retry-after') ?? 1) * 1000 : 100);
  }
};

describe('the outbox through database outages', () => {
  it(
    'leaves no message unsent, mails every invitation, duplicates only for failed SENT writes, and recovers its lag',
    { timeout: 600_000 },
    async () => {
      const owners = await Promise.all(Array.from({ length: WORKERS }, (_, i) => signUp(api, `owner${i}`)));
      const teams = await Promise.all(owners.map((o) => createTeam(api, o)));
      const attempts: Attempt[] = [];
      let loadOver = false;
      const load = Promise.all(owners.map((o, i) => inviteWithoutPause(o, (teams[i] as { slug: string }).slug, attempts, () => loadOver)));
      const began = Date.now();

      const faults: Fault[] = [];
      // A few seconds of lag before any fault, for comparison.
      await sleep(8000);
      for (let i = 0; i <= KILLS; i++) {
        const at = Date.now();
        if (i === HANG_AT) {
          process.kill(dynamo.pid, 'SIGSTOP');
          await sleep(HANG_MS);
          process.kill(dynamo.pid, 'SIGCONT');
          faults.push({ kind: 'hang', at, recovered: Date.now() });
        } else {
          dynamo.stop();
          await gone(dynamo.pid);
          dynamo = await startDynamoDbLocal(dynamoDir, dynamoPort);
          faults.push({ kind: 'kill', at, recovered: Date.now() });
        }
        await sleep(i === KILLS ? LAST_GAP_MS : GAP_MS);
      }
      loadOver = true;
      await load;
      const loadEnded = Date.now();

      // Every message ends: SENT or FAILED, none PENDING or SENDING (the test may Scan; the code never does).
      const { db } = await import('#lib/db/service.ts');
      // The invitations: the owners' sign-up confirmation messages end FAILED (skipped: confirmed already by the helper).
      const messages = async () =>
        (await db().entities.outboxMessage.scan.go({ pages: 'all' })).data.filter((m) => m.kind === 'invitation');
      let all = await messages();
      while (all.some((m) => m.status === 'PENDING' || m.status === 'SENDING') && Date.now() - loadEnded < 60_000) {
        await sleep(1000);
        all = await messages();
      }
      const drainedMs = Date.now() - loadEnded;
      await sleep(1000);

      const acknowledged = attempts.filter((a) => a.status === 201);
      const statuses: Record<string, number> = {};
      for (const a of attempts) statuses[a.status] = (statuses[a.status] ?? 0) + 1;
      const ids = smtp.inbox.map((m) => m.messageId);
      const duplicates = ids.length - new Set(ids).size;
      const unrecorded = perMessage(errors.mock.calls, 'outbox message sent, but SENT was not recorded: it will be sent again', 2);
      // The emulator may also lose a SENT write it acknowledged (below): the message was logged sent twice.
      const sentLogged = perMessage(infos.mock.calls, 'outbox message sent', 1);
      const sendsOf = new Map<string, number>();
      for (const id of ids) sendsOf.set(id, (sendsOf.get(id) ?? 0) + 1);
      const explained = [...sendsOf].map(([header, sends]) => {
        const id = header.slice(1, header.indexOf('@'));
        return { id, extra: sends - 1, unrecorded: unrecorded.get(id) ?? 0, ackedLost: Math.max(0, (sentLogged.get(id) ?? 0) - 1) };
      });
      const mailedTo = new Set(smtp.inbox.flatMap((m) => m.to));
      // DynamoDB Local answers a write before its SQLite commit is done: SIGKILL at that moment loses
      // the acknowledged transaction, invite and outbox message together (DynamoDB itself answers
      // only once a write is durable). Such an invitation no longer exists, so it has nothing to mail.
      const unmailed = acknowledged.filter((a) => !mailedTo.has(a.email));
      const lost: Attempt[] = [];
      for (const a of unmailed) if ((await db().entities.invite.query.byEmail({ email: a.email }).go()).data.length === 0) lost.push(a);
      const firstArrival = new Map<string, number>();
      smtp.inbox.forEach((m, i) => {
        if (!firstArrival.has(m.messageId)) firstArrival.set(m.messageId, arrivals[i] ?? Date.now());
      });
      // The lag as OutboxLag measures it: from the message's creation (in the invite's transaction) to the send.
      const lags = all.map((m) => {
        const created = Date.parse(m.createdAt);
        return { created, lag: (firstArrival.get(`<${m.messageId}@roster.example.com>`) ?? Infinity) - created };
      });

      // Per recovery: the largest lag of messages made from 15 s after it until 5 s before the next
      // fault, and how long after the recovery every message from then on was sent within 5 s.
      const windows = faults.map((f, i) => {
        const end = (faults[i + 1]?.at ?? loadEnded) - LAG_LIMIT_MS;
        const after = lags.filter((l) => l.created >= f.recovered && l.created < end);
        const late = after.filter((l) => l.lag >= LAG_LIMIT_MS);
        const measured = after.filter((l) => l.created >= f.recovered + RECOVERY_MS);
        return {
          kind: f.kind,
          outageMs: f.recovered - f.at,
          measured: measured.length,
          maxLagMs: Math.max(0, ...measured.map((l) => l.lag)),
          lagUnder5sAfterMs: (late.length ? Math.max(...late.map((l) => l.created)) : f.recovered) - f.recovered,
        };
      });
      const before = lags.filter((l) => l.created < (faults[0] as Fault).at - LAG_LIMIT_MS);
      const figures = {
        durationMs: loadEnded - began,
        kills: faults.filter((f) => f.kind === 'kill').length,
        hangs: faults.filter((f) => f.kind === 'hang').length,
        requests: attempts.length,
        statuses,
        messages: all.length,
        byStatus: Object.fromEntries(['PENDING', 'SENDING', 'SENT', 'FAILED'].map((s) => [s, all.filter((m) => m.status === s).length])),
        unconfirmed: all.filter((m) => m.error?.startsWith('unconfirmed:')).length,
        mails: ids.length,
        duplicates,
        sentWritesFailed: [...unrecorded.values()].reduce((a, b) => a + b, 0),
        sentWritesLostByKill: explained.reduce((sum, e) => sum + e.ackedLost, 0),
        acknowledgedWritesLostByKill: lost.length,
        redeliveredBySweeper: logged(infos, 'outbox message redelivered by the sweeper'),
        leftToOtherMailer: logged(infos, 'outbox message held by another mailer'),
        deliveriesRetried: logged(errors, 'outbox delivery failed, will retry'),
        deadLettered: logged(errors, 'stream record dead-lettered'),
        drainedMs,
        maxLagBeforeFaultsMs: Math.max(0, ...before.map((l) => l.lag)),
        windows,
      };
      log.info('outage figures', figures);

      expect(figures.kills).toBe(KILLS);
      expect(figures.hangs).toBe(1);
      // The API: never a 500; every 503 says when to come back.
      expect(statuses[500] ?? 0).toBe(0);
      expect(Object.keys(statuses).every((s) => s === '201' || s === '503')).toBe(true);
      expect(attempts.filter((a) => a.status === 503).every((a) => a.retryAfter !== null)).toBe(true);
      expect(statuses[503] ?? 0).toBeGreaterThan(0);
      // No message left unsent, none ended without its e-mail.
      expect(figures.byStatus).toMatchObject({ PENDING: 0, SENDING: 0, FAILED: 0 });
      expect(figures.unconfirmed).toBe(0);
      const mailed = new Set(ids);
      expect(all.filter((m) => !mailed.has(`<${m.messageId}@roster.example.com>`))).toEqual([]);
      // Every invitation mailed at least once; a duplicate only for a SENT write that failed.
      expect(unmailed.filter((a) => !lost.includes(a)).map((a) => a.email)).toEqual([]);
      // A write is lost only when a kill came while it was being answered.
      expect(lost.filter((a) => !faults.some((f) => f.kind === 'kill' && a.start <= f.at && f.at - a.start < 10_000))).toEqual([]);
      expect(explained.filter((e) => e.extra > e.unrecorded + e.ackedLost)).toEqual([]);
      // How soon the lag comes back after each recovery is a figure (`windows` in the logged line),
      // not a check: it depends on how busy the machine is, and a test must not.
      expect((windows.at(-1) as { measured: number }).measured).toBeGreaterThan(0);
    },
  );
});
