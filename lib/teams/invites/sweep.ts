import { inFlight } from '#lib/core/in-flight.ts';
import { stepWhile } from '#lib/core/time-budget.ts';
import { HOUR_MS, isoMillis } from '#lib/core/time.ts';
import { EXPIRY_SHARDS, expiryBucketOf, statusComposites } from '#lib/db/entities/invites.ts';
import type { Db } from '#lib/db/service.ts';
import { isConditionFailure } from '#lib/db/transactions.ts';
import { INVITE_SWEEP } from '#lib/http/background.ts';

/**
 * The invite sweeper (docs/data-model.md, "Expired invites"). Nothing writes an invite when it
 * expires, so it would stay under the PENDING prefix of gsi1 and gsi2, which the invite lists
 * read, until TTL removes it 30 days later. A scheduled run sets such invites to EXPIRED: out of
 * that prefix, and out of gsi3, where it found them. The lists still filter on `expiresAt`, so
 * they are right whatever the sweeper has reached; the sweeper only keeps what they read small.
 */

/** A run starts no new page with less time than this left (INVITE_SWEEP.reserveSeconds). */
export const RESERVE_MS = INVITE_SWEEP.reserveSeconds * 1000;

/** Invites read per Query page; their updates go out WRITES_IN_FLIGHT at a time. */
const PAGE = 100;
const WRITES_IN_FLIGHT = 10;
/** Shards of one hour queried at once. */
const SHARDS_IN_FLIGHT = 8;

export interface SweepResult {
  /** Invites set to EXPIRED in this run. */
  expired: number;
  /** Index entries whose invite had changed meanwhile (renewed, ended, gone): left alone. */
  skipped: number;
  /** gsi3 Query requests made. */
  queries: number;
  /** The watermark after the run: every hour before it is swept. */
  sweptBefore: string;
  /** False when the time ran out with expired invites possibly left (the next run goes on). */
  caughtUp: boolean;
}

const hourOf = (ms: number): string => new Date(ms).toISOString().slice(0, 13);

/**
 * Sets every PENDING invite that expired by `now` to EXPIRED, hour by hour of gsi3 from the
 * watermark on, while `mayGoOn()` allows another page. Each update is conditioned on the invite
 * still being PENDING and expired as read, so one renewed, accepted or deleted meanwhile is left
 * alone. Idempotent: a run cut short anywhere is resumed by the next one.
 */
export const sweepExpiredInvites = async (db: Db, now: Date, mayGoOn: () => boolean): Promise<SweepResult> => {
  const { invite, inviteSweep } = db.entities;
  const stamp = isoMillis(now);
  const result: SweepResult = { expired: 0, skipped: 0, queries: 0, sweptBefore: '', caughtUp: true };

  const expire = async (i: Parameters<typeof statusComposites>[0] & { inviteUuid: string }) => {
    try {
      await invite
        .patch({ inviteUuid: i.inviteUuid })
        .set({ status: 'EXPIRED' })
        .composite(statusComposites(i))
        .where((a, op) => `${op.eq(a.status, 'PENDING')} AND ${op.lte(a.expiresAt, stamp)}`)
        .go();
      result.expired++;
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      result.skipped++;
    }
  };

  /** One shard of one hour, page by page; true when it was read to the end. */
  const sweepShard = async (expiryBucket: string): Promise<boolean> => {
    if (!mayGoOn()) return false;
    let cursor: string | null = null;
    const { finished } = await stepWhile(async () => {
      const page: { data: Parameters<typeof expire>[0][]; cursor: string | null } = await invite.query
        .byExpiry({ expiryBucket })
        .lte({ expiresAt: stamp })
        .go({ cursor, limit: PAGE });
      result.queries++;
      await inFlight(page.data, WRITES_IN_FLIGHT, expire);
      cursor = page.cursor;
      return cursor !== null;
    }, mayGoOn);
    return finished;
  };

  const state = (await inviteSweep.get({}).go({ consistent: true })).data;
  const currentHour = Math.floor(now.getTime() / HOUR_MS) * HOUR_MS;
  // First run: invites are written expiring inviteDays ahead, so none is due before the last hour.
  const from = state ? Date.parse(`${state.sweptBefore}:00:00.000Z`) : currentHour - HOUR_MS;
  let sweptBefore = from;
  for (let hour = from; hour <= currentHour; hour += HOUR_MS) {
    const shards = Array.from({ length: EXPIRY_SHARDS }, (_, shard) => expiryBucketOf(hourOf(hour), shard));
    let drained = true;
    await inFlight(shards, SHARDS_IN_FLIGHT, async (bucket) => {
      if (!(await sweepShard(bucket))) drained = false;
    });
    if (!drained) {
      result.caughtUp = false;
      break;
    }
    // The current hour has invites still to expire: it stays the watermark.
    if (hour < currentHour) sweptBefore = hour + HOUR_MS;
  }
  result.sweptBefore = hourOf(sweptBefore);
  if (!state || sweptBefore > from) {
    try {
      await inviteSweep
        .put({ sweptBefore: result.sweptBefore, updatedAt: stamp })
        .where((a, op) => `(${op.notExists(a.sweptBefore)} OR ${op.lt(a.sweptBefore, result.sweptBefore)})`)
        .go();
    } catch (error) {
      // An overlapping run got further: its watermark stands.
      if (!isConditionFailure(error)) throw error;
    }
  }
  return result;
};
