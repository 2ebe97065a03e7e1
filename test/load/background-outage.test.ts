/**
 * The background through database outages (issue 11, item 9; issue 24). This file's own DynamoDB
 * Local, keeping its data in a directory so that it comes back with it on the same port; the local
 * server's handlers, and the background as deployed (infra/local-background.ts): the stream's one
 * reader, the mailer, the team cleanup and the webhook fan-out on their queues, the webhook
 * delivery on its own, and the outbox sweeper on its local timer, all against it; a real SMTP
 * server and a webhook receiver in this process. Invites are created without pause (each one mail
 * and one webhook event), and teams with members and invites are made and deleted (each one cleanup
 * job), while DynamoDB Local is killed (SIGKILL, then started again) five times and hung
 * (SIGSTOP … SIGCONT) once. Then: no message left unsent, every invitation mailed, every mail caught
 * by a fault out within 30 s of the recovery, duplicates no more than the SENT writes that failed;
 * every webhook event delivered; every cleanup job done and its team's rows gone; nothing
 * dead-lettered; no 500. The deployed lease, grace and sweep rate (OUTBOX_LEASE_MS 20 s, grace 30 s,
 * a sweep a minute). How soon the delivery lag recovers after each fault is measured and logged
 * (`outage figures`, its `windows`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type DynamoDbLocal, ensureTable, freePort, startDynamoDbLocal } from '#infra/dynamodb-local.ts';
import type { LocalBackground } from '#infra/local-background.ts';
import { type TestUser, addMember, createTeam, freshEmail, signUp, useApi } from '../helpers/api.ts';
import { receiver } from '../helpers/receiver.ts';
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
  WEBHOOKS_ALLOW_PRIVATE_URLS: 'true',
});

/** Mail caught by a fault goes out within this of the recovery (issue 24). */
const RECOVERY_SEND_MS = 30_000;
/** The webhook retry schedule's delays (5 s … 10 h) times this: a message's 8 attempts fit in some 16 minutes. */
const WEBHOOK_TIME_SCALE = 0.01;
/** Every one of the cleanup worker's teams has this many members besides its owner, and as many pending invites. */
const TEAM_ROWS = 3;

const hook = receiver((_req, res) => res.writeHead(204).end());

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

let background: LocalBackground | undefined;
let stopSweeper: () => Promise<void>;
beforeAll(async () => {
  const { config } = await import('#lib/core/config.ts');
  // The settings above must have been read by now, not before; the lease and grace are the deployed ones.
  expect([config.dynamodbEndpoint, config.outboxLeaseMs, config.outboxSweepGraceMs]).toEqual([dynamo.endpoint, 20_000, 30_000]);
  await smtp.start();
  await new Promise<void>((resolve) => hook.server.listen(0, '127.0.0.1', resolve));
  const { startLocalBackground } = await import('#infra/local-background.ts');
  background = await startLocalBackground({
    endpoint: dynamo.endpoint,
    tableName,
    dataDir: process.env.DATA_DIR as string,
    queues: { webhook: { timeScale: WEBHOOK_TIME_SCALE } },
  });
  const { startSchedule } = await import('#infra/schedules.ts');
  stopSweeper = startSchedule('outbox-sweep').stop;
});
afterAll(async () => {
  clearInterval(watch);
  await stopSweeper?.();
  await background?.stop();
  hook.server.closeAllConnections();
  await new Promise((resolve) => hook.server.close(resolve));
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

interface Deletion {
  teamId: number;
  status: number;
}

/**
 * Makes teams of TEAM_ROWS members and TEAM_ROWS pending invites and deletes them, one after another,
 * until `until()` says stop; a step that fails (503) is tried again after its Retry-After. Records
 * each team's deletion answer.
 */
const deleteTeamsWithoutPause = async (owner: TestUser, members: TestUser[], deletions: Deletion[], until: () => boolean) => {
  const retried = async <T>(step: () => Promise<T & { status: number; headers: Headers }>, ok: number): Promise<T & { status: number }> => {
    for (;;) {
      const res = await step();
      if (res.status !== 503) {
        expect(res.status).toBe(ok);
        return res;
      }
      await sleep(Number(res.headers.get('retry-after') ?? 1) * 1000);
    }
  };
  while (!until()) {
    try {
      const team = await createTeam(api, owner);
      for (const member of members) await addMember(api, team.slug, owner, member, 'MEMBER');
      for (let i = 0; i < TEAM_ROWS; i++) {
        await retried(
          () =>
            api.call('POST', `/api/teams/${team.slug}/invites`, {
              token: owner.token,
              json: { email: freshEmail('gone'), role: 'MEMBER' },
            }),
          201,
        );
      }
      const res = await retried(() => api.call('DELETE', `/api/teams/${team.slug}`, { token: owner.token }), 200);
      deletions.push({ teamId: team.id, status: res.status });
    } catch {
      // A helper that does not retry met an outage (createTeam, addMember): that team is simply not deleted.
      await sleep(1000);
    }
  }
};

describe('the background through database outages', () => {
  it(
    'leaves no mail unsent (each out within 30 s of the recovery), no webhook event undelivered, no cleanup job behind, duplicates only for failed SENT writes',
    { timeout: 900_000 },
    async () => {
      const owners = await Promise.all(Array.from({ length: WORKERS }, (_, i) => signUp(api, `owner${i}`)));
      const teams = await Promise.all(owners.map((o) => createTeam(api, o)));
      for (const [i, team] of teams.entries()) {
        const created = await api.call('POST', `/api/teams/${team.slug}/webhooks`, {
          token: (owners[i] as TestUser).token,
          json: { url: hook.url(`/hook/${team.id}`), events: ['invite.created'] },
        });
        expect(created.status).toBe(201);
      }
      const deleter = await signUp(api, 'deleter');
      const members = await Promise.all(Array.from({ length: TEAM_ROWS }, (_, i) => signUp(api, `member${i}`)));
      const attempts: Attempt[] = [];
      const deletions: Deletion[] = [];
      let loadOver = false;
      const load = Promise.all([
        ...owners.map((o, i) => inviteWithoutPause(o, (teams[i] as { slug: string }).slug, attempts, () => loadOver)),
        deleteTeamsWithoutPause(deleter, members, deletions, () => loadOver),
      ]);
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
      const invitations = async () =>
        (await db().entities.outboxMessage.scan.go({ pages: 'all' })).data.filter((m) => m.kind === 'invitation');
      let everyInvitation = await invitations();
      while (everyInvitation.some((m) => m.status === 'PENDING' || m.status === 'SENDING') && Date.now() - loadEnded < 60_000) {
        await sleep(1000);
        everyInvitation = await invitations();
      }
      // The workers' invitations: those of their teams' invites. The deletion worker's (its members'
      // invites, accepted at once, and its teams', deleted) end FAILED unsent by design.
      const workerTeams = new Set(teams.map((t) => t.id));
      const teamOf = new Map<string, number>();
      const uuids = [...new Set(everyInvitation.map((m) => m.inviteUuid).filter((u) => u !== undefined))];
      for (let i = 0; i < uuids.length; i += 100) {
        const { data } = await db()
          .entities.invite.get(uuids.slice(i, i + 100).map((inviteUuid) => ({ inviteUuid })))
          .go();
        for (const invite of data) teamOf.set(invite.inviteUuid, invite.teamId);
      }
      const all = everyInvitation.filter((m) => workerTeams.has(teamOf.get(m.inviteUuid ?? '') ?? 0));
      const ofDeletion = everyInvitation.filter((m) => !all.includes(m));
      const drainedMs = Date.now() - loadEnded;
      // Every webhook event of the invites' teams, and every cleanup job: done once the queues are empty.
      const queues = background?.queues ?? [];
      while (queues.some((q) => q.size() > 0) && Date.now() - loadEnded < 240_000) await sleep(1000);
      const jobsLeft = async () => (await db().entities.teamCleanup.scan.go({ pages: 'all' })).data;
      let jobs = await jobsLeft();
      while (jobs.length > 0 && Date.now() - loadEnded < 300_000) {
        await sleep(1000);
        jobs = await jobsLeft();
      }
      const backgroundDrainedMs = Date.now() - loadEnded;
      await sleep(1000);

      const events = (
        await Promise.all(teams.map(async (t) => (await db().entities.auditEntry.query.byTeam({ teamId: t.id }).go({ pages: 'all' })).data))
      )
        .flat()
        .filter((e) => e.action === 'invite.created');
      const delivered = new Set(hook.received.map((r) => String(r.headers['webhook-id'])));
      const undelivered = events.filter((e) => !delivered.has(e.entryId));
      const rowsLeft = (
        await Promise.all(
          deletions.map(
            async (d) => (await db().entities.membership.query.primary({ teamId: d.teamId }).go({ consistent: true })).data.length,
          ),
        )
      ).reduce((a, b) => a + b, 0);
      const deadLetters = queues.flatMap((q) => q.deadLetters);

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
      // Mail caught by a fault: made before its recovery and not sent before it began.
      const caught = faults.map((f) => {
        const late = lags.filter((l) => l.created < f.recovered && l.created + l.lag > f.at);
        return {
          kind: f.kind,
          mails: late.length,
          lastSentAfterRecoveryMs: Math.max(0, ...late.map((l) => l.created + l.lag - f.recovered)),
        };
      });
      const figures = {
        durationMs: loadEnded - began,
        kills: faults.filter((f) => f.kind === 'kill').length,
        hangs: faults.filter((f) => f.kind === 'hang').length,
        requests: attempts.length,
        statuses,
        messages: all.length,
        byStatus: Object.fromEntries(['PENDING', 'SENDING', 'SENT', 'FAILED'].map((s) => [s, all.filter((m) => m.status === s).length])),
        unconfirmed: all.filter((m) => m.error?.startsWith('unconfirmed:')).length,
        failedBecause: Object.fromEntries(
          [...new Set(all.filter((m) => m.status === 'FAILED').map((m) => m.error ?? ''))].map((e) => [
            e,
            all.filter((m) => m.status === 'FAILED' && m.error === e).length,
          ]),
        ),
        mails: ids.length,
        duplicates,
        sentWritesFailed: [...unrecorded.values()].reduce((a, b) => a + b, 0),
        sentWritesLostByKill: explained.reduce((sum, e) => sum + e.ackedLost, 0),
        acknowledgedWritesLostByKill: lost.length,
        redeliveredBySweeper: logged(infos, 'outbox message redelivered by the sweeper'),
        leftToOtherMailer: logged(infos, 'outbox message held by another mailer'),
        deliveriesRetried: logged(errors, 'outbox delivery failed: it comes back'),
        deadLettered: logged(errors, 'stream record dead-lettered') + deadLetters.length,
        caught,
        webhookEvents: events.length,
        webhookDeliveries: hook.received.length,
        webhookEventsUndelivered: undelivered.length,
        teamsDeleted: deletions.length,
        deletionWorkerInvitations: ofDeletion.length,
        deletionWorkerLeft: ofDeletion.filter((m) => m.status === 'PENDING' || m.status === 'SENDING').length,
        cleanupJobsLeft: jobs.length,
        cleanupRowsLeft: rowsLeft,
        drainedMs,
        backgroundDrainedMs,
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
      // Mail caught by a fault goes out within 30 s of the recovery.
      expect(caught.filter((c) => c.lastSentAfterRecoveryMs > RECOVERY_SEND_MS)).toEqual([]);
      // Webhooks: every invite.created event of the teams delivered, nothing dead-lettered.
      expect(events.length).toBeGreaterThan(0);
      expect(undelivered.map((e) => e.entryId)).toEqual([]);
      expect(figures.deadLettered).toBe(0);
      // Cleanups: every deleted team's job done and its members gone.
      expect(deletions.length).toBeGreaterThan(0);
      expect(jobs).toEqual([]);
      // The deletion worker's invitations ended too, sent or skipped.
      expect(figures.deletionWorkerLeft).toBe(0);
      expect(rowsLeft).toBe(0);
      // How soon the lag comes back after each recovery is a figure (`windows` in the logged line),
      // not a check: it depends on how busy the machine is, and a test must not.
      expect((windows.at(-1) as { measured: number }).measured).toBeGreaterThan(0);
    },
  );
});
