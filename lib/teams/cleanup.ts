import { setTimeout as sleep } from 'node:timers/promises';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import { inFlight } from '#lib/core/in-flight.ts';
import { log } from '#lib/core/log.ts';
import { stepWhile, timeBudget } from '#lib/core/time-budget.ts';
import { isoMillis } from '#lib/core/time.ts';
import type { Db } from '#lib/db/service.ts';
import { newImageOf } from '#lib/db/stream-records.ts';
import type { QueuedRecord, WorkFailure } from '#lib/events/queued-records.ts';
import { isConditionFailure } from '#lib/db/transactions.ts';
import { TEAM_CLEANUP } from '#lib/http/background.ts';

/**
 * The cleanup of a deleted team (docs/data-model.md, "Team deletion"). DELETE /api/teams/{slug}
 * deletes the team and its slug claim and writes a `teamCleanup` job in one transaction; the job's
 * stream records start functions/team-cleanup.ts, which runs `runCleanupJobs` below.
 *
 * Termination: an accept deletes its (team, e-mail) pending-invite claim in its transaction, with
 * a condition on it, and an invite create or re-invite checks the actor's membership in its
 * transaction. So once the team's partition (memberships and claims) is empty in one strongly
 * consistent Query, no membership and no pending invite of the team can appear again. Each pass
 * deletes the claims (with their invites) first, then the memberships, and passes repeat until that
 * Query finds nothing; then the team's remaining (ended) invites go, found through gsi1.
 */

/** A run starts no new batch with less time than this left (TEAM_CLEANUP.reserveSeconds). */
export const RESERVE_MS = TEAM_CLEANUP.reserveSeconds * 1000;

/** Items read (and then deleted) per batch: one Query page, then BatchWriteItems of 25. */
const PAGE = 500;
/** BatchWriteItems of one batch in flight at once. */
const WRITES_IN_FLIGHT = 10;
/**
 * Pause after a batch DynamoDB left wholly unprocessed (throttled: a team's memberships share one
 * partition, about 1,000 writes a second). Leftovers are not retried in place: they are still
 * there, so the next batch's Query finds them again.
 */
const THROTTLED_PAUSE_MS = 200;
/** Between the two looks at an empty partition: far longer than a transaction takes to commit. */
const SETTLE_MS = 2_000;

export interface CleanupProgress {
  /** True when nothing of the team is left (the job can go). */
  done: boolean;
  /** Items deleted in this run (a delete of an item already gone counts too). */
  deleted: number;
  /** Query pages handled in this run. */
  batches: number;
}

/**
 * Deletes what is left of team `teamId`, batch by batch, while `mayGoOn()` allows another batch
 * (at least one batch is always done, so every run makes progress). Idempotent: it starts from
 * whatever is still stored, so a run cut short anywhere is resumed by simply running again.
 */
export const cleanUpTeam = async (db: Db, teamId: number, mayGoOn: () => boolean): Promise<CleanupProgress> => {
  const { membership, pendingInvite, invite, transfer, webhookEndpoint, webhookCount, teamDomain, domainOwner, joinRequest } = db.entities;
  const progress: CleanupProgress = { done: false, deleted: 0, batches: 0 };
  /** Deletes the keys in BatchWriteItems; returns those DynamoDB left unprocessed (still there). */
  const del = async <K>(keys: K[], remove: (keys: K[]) => Promise<{ unprocessed: K[] }>): Promise<K[]> => {
    const { unprocessed } = await remove(keys);
    progress.deleted += keys.length - unprocessed.length;
    if (unprocessed.length === keys.length) await sleep(THROTTLED_PAUSE_MS);
    return unprocessed;
  };

  /** One batch of the first kind of item still there; false when there is none of any kind. */
  const batch = async (): Promise<boolean> => {
    // Claims first, each invite before its claim: a crash in between leaves the claim, which the
    // next run finds again. Once both are gone, no accept of that invite can commit.
    const claims = (await pendingInvite.query.primary({ teamId }).go({ consistent: true, limit: PAGE })).data;
    if (claims.length > 0) {
      const kept = new Set(
        (
          await del(
            claims.map((c) => ({ inviteUuid: c.inviteUuid })),
            (keys) => invite.delete(keys).go({ concurrency: WRITES_IN_FLIGHT }),
          )
        ).map((k) => k.inviteUuid),
      );
      const gone = claims.filter((c) => !kept.has(c.inviteUuid));
      if (gone.length > 0) {
        await del(
          gone.map((c) => ({ teamId, email: c.email })),
          (keys) => pendingInvite.delete(keys).go({ concurrency: WRITES_IN_FLIGHT }),
        );
      }
      return true;
    }
    const members = (await membership.query.primary({ teamId }).go({ consistent: true, limit: PAGE, attributes: ['userUuid'] })).data;
    if (members.length > 0) {
      await del(
        members.map((m) => ({ teamId, userUuid: m.userUuid })),
        (keys) => membership.delete(keys).go({ concurrency: WRITES_IN_FLIGHT }),
      );
      return true;
    }
    // The team's domains (docs/domains.md): a verified one's owner item first, so the domain is free
    // for another team; then the claim. A claim needs the team item, so none comes after it went.
    const domains = (await teamDomain.query.primary({ teamId }).go({ consistent: true, limit: PAGE })).data;
    if (domains.length > 0) {
      for (const d of domains.filter((x) => x.status === 'VERIFIED')) {
        await domainOwner
          .delete({ domain: d.domain })
          .where((a, op) => op.eq(a.teamId, teamId))
          .go()
          .catch((error: unknown) => {
            if (!isConditionFailure(error)) throw error;
          });
      }
      await del(
        domains.map((d) => ({ teamId, domain: d.domain })),
        (keys) => teamDomain.delete(keys).go({ concurrency: WRITES_IN_FLIGHT }),
      );
      return true;
    }
    // Requests to join: a new one needs the domain's claim, which is gone.
    const requests = (await joinRequest.query.primary({ teamId }).go({ consistent: true, limit: PAGE, attributes: ['userId'] })).data;
    if (requests.length > 0) {
      await del(
        requests.map((r) => ({ teamId, userId: r.userId })),
        (keys) => joinRequest.delete(keys).go({ concurrency: WRITES_IN_FLIGHT }),
      );
      return true;
    }
    // The team's open ownership transfer, if any: only a member can nominate, so none comes after
    // the memberships (a nomination that committed before their delete is found by the look below).
    const { data: nominated } = await transfer.delete({ teamId }).go({ response: 'all_old' });
    if (nominated) progress.deleted++;
    // Claims were none, then memberships were none, but an invite create may have committed in
    // between: only a look at the whole partition at once proves it empty. A Query is only
    // read-committed against transactions: one may see an accept's claim delete before its
    // membership put. So look twice, the second time after any transaction under way has ended.
    if (!(await partitionEmpty(db, teamId))) return true;
    await sleep(SETTLE_MS);
    if (!(await partitionEmpty(db, teamId))) return true;
    // Nothing can add an invite of this team any more: the ended ones (gsi1, whatever the status).
    const ended = (await invite.query.byTeam({ teamId }).go({ limit: PAGE, attributes: ['inviteUuid'] })).data;
    if (ended.length > 0) {
      await del(
        ended.map((i) => ({ inviteUuid: i.inviteUuid })),
        (keys) => invite.delete(keys).go({ concurrency: WRITES_IN_FLIGHT }),
      );
      return true;
    }
    // The webhook endpoints and their secrets (their own partition): a create checks that the team
    // exists in its transaction, so none can come after the team item went.
    const hooks = (await webhookEndpoint.query.byTeam({ teamId }).go({ consistent: true, limit: PAGE, attributes: ['endpointId'] })).data;
    if (hooks.length > 0) {
      await del(
        hooks.map((h) => ({ teamId, endpointId: h.endpointId })),
        (keys) => webhookEndpoint.delete(keys).go({ concurrency: WRITES_IN_FLIGHT }),
      );
      return true;
    }
    await webhookCount.delete({ teamId }).go();
    return false;
  };

  const { finished, worked } = await stepWhile(batch, mayGoOn);
  return { ...progress, done: finished, batches: worked };
};

/**
 * True when the team's partition (pk = the team: its memberships, pending-invite claims and open
 * transfer) holds nothing, in one strongly consistent Query. An item of another kind there would
 * never be deleted by this module, so it fails the run loudly (retries, then the dead-letter queue
 * and its alarm).
 */
const partitionEmpty = async (db: Db, teamId: number): Promise<boolean> => {
  const { Key, TableName } = db.entities.team.get({ teamId }).params() as { Key: { pk: string }; TableName: string };
  const { Items = [] } = await db.documents.send(
    new QueryCommand({
      TableName,
      KeyConditionExpression: '#pk = :pk',
      ExpressionAttributeNames: { '#pk': 'pk' },
      ExpressionAttributeValues: { ':pk': Key.pk },
      ConsistentRead: true,
      Limit: 1,
    }),
  );
  const left = Items[0];
  if (left && !['membership', 'pendingInvite', 'transfer', 'teamDomain', 'joinRequest'].includes(String(left.__edb_e__))) {
    throw new Error(`team ${teamId} partition holds a ${String(left.__edb_e__)} item that the cleanup does not delete`);
  }
  return left === undefined;
};

/** The team id of a stream record that wrote a cleanup job, else undefined. */
export const cleanupJobOf = (record: DynamoDBRecord): number | undefined =>
  newImageOf(record, 'teamCleanup', ['INSERT', 'MODIFY'])?.number('teamId');

/** When a job untouched from `now` on is started again by the sweep (lib/teams/cleanup-sweep.ts). */
export const cleanupDueAt = (now: Date): string => isoMillis(new Date(now.getTime() + TEAM_CLEANUP.staleAfterSeconds * 1000));

/**
 * A batch of the jobs' queued stream records (INSERTs and MODIFYs): the jobs run side by side (each
 * team is a partition of its own), each until the time left (`remainingMs`, Lambda's
 * getRemainingTimeInMillis) falls under RESERVE_MS. A job finished is deleted; a job with work left
 * gets its progress recorded, and that update's MODIFY record starts the next run. Answers the
 * jobs that failed and why, so that their queue hands them back.
 */
export const runCleanupJobs = async (db: Db, queued: readonly QueuedRecord[], remainingMs: () => number): Promise<WorkFailure[]> => {
  const jobs = new Map<number, string>();
  for (const { messageId, record } of queued) {
    const teamId = cleanupJobOf(record);
    // An INSERT and a MODIFY of one job in the same batch: one run does for both.
    if (teamId !== undefined && !jobs.has(teamId)) jobs.set(teamId, messageId);
  }
  const failures: WorkFailure[] = [];
  await inFlight([...jobs], jobs.size, async ([teamId, messageId]) => {
    try {
      await runJob(db, teamId, remainingMs);
    } catch (error) {
      log.error('team cleanup failed, will retry', error, { teamId, messageId });
      failures.push({ messageId, error });
    }
  });
  return failures;
};

const runJob = async (db: Db, teamId: number, remainingMs: () => number): Promise<void> => {
  const { teamCleanup } = db.entities;
  const job = (await teamCleanup.get({ teamId }).go({ consistent: true })).data;
  // Finished already (a record delivered again, or the MODIFY of the last progress update).
  if (!job) return;
  const started = Date.now();
  const { mayGoOn } = timeBudget(remainingMs, RESERVE_MS);
  const progress = mayGoOn() ? await cleanUpTeam(db, teamId, mayGoOn) : { done: false, deleted: 0, batches: 0 };
  const fields = { teamId, slug: job.slug, ...progress, ms: Date.now() - started, runs: (job.runs ?? 0) + 1 };
  if (progress.done) {
    await teamCleanup.delete({ teamId }).go();
    log.info('team cleanup finished', fields);
    return;
  }
  try {
    await teamCleanup
      .patch({ teamId })
      .add({ runs: 1, deleted: progress.deleted })
      .set({ updatedAt: isoMillis(new Date()), dueAt: cleanupDueAt(new Date()) })
      .go();
    log.info('team cleanup goes on in the next run', fields);
  } catch (error) {
    // Another run finished the job meanwhile: nothing left to record.
    if (!isConditionFailure(error)) throw error;
  }
};
