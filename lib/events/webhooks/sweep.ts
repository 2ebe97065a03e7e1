import { log } from '#lib/core/log.ts';
import { stepWhile } from '#lib/core/time-budget.ts';
import { addDays, isExpired, isoMillis } from '#lib/core/time.ts';
import { uuidV7Floor } from '#lib/core/uuid-v7.ts';
import type { Db } from '#lib/db/service.ts';
import { isConditionFailure } from '#lib/db/transactions.ts';
import { WEBHOOK_SWEEP } from '#lib/http/background.ts';
import { fanOut } from './fan-out.ts';
import type { WebhookQueue } from './queue.ts';

/**
 * The sweep of webhook events whose fan-out was lost (docs/webhooks.md, "When the stream loses an
 * event"): an audit entry whose stream record or fan-out message never became messages (the stream
 * reader or the work queue gave up on it, or `npm start` stopped with it queued) would never be
 * sent. Every team that has had an endpoint is in gsi3 with a watermark (`sweepFrom`); a run reads
 * each team's audit log from there to WEBHOOK_SWEEP.settleSeconds ago, in pages, with the receipts
 * of the same stretch (one Query each), and hands the entries without a receipt to the fan-out,
 * which sends those a subscribed endpoint still wants. Then the watermark moves on (only when the
 * stretch held entries: an idle team costs one Query a run). Entries sent meanwhile by the stream
 * have their receipts, and the fan-out checks again before it sends.
 */

/** A run starts no new page with less time than this left (WEBHOOK_SWEEP.reserveSeconds). */
export const RESERVE_MS = WEBHOOK_SWEEP.reserveSeconds * 1000;

/** Teams read per gsi3 page. */
const TEAMS_PAGE = 100;
/** Audit entries read per page. */
const ENTRIES_PAGE = 100;
/** Pages of one team per run, by default. */
const PAGES_PER_TEAM = 20;

export interface WebhookSweep {
  /** Teams whose audit log held entries to check. */
  teams: number;
  /** Entries checked. */
  checked: number;
  /** Entries without a receipt handed to the fan-out. */
  unsent: number;
  /** Messages those became (none for an entry no endpoint subscribes to). */
  messages: number;
  /** False when the time ran out with teams or entries left (the next run goes on). */
  caughtUp: boolean;
}

/** A team's watermark: from `sweepFrom` on, or, for a run cut short, after entry `sweepAfter` (of the stretch from `sweepFrom`). */
interface Mark {
  sweepFrom: string;
  sweepAfter?: string | undefined;
}

interface Options {
  /** Pages of one team per run (PAGES_PER_TEAM): a team with a long backlog leaves time for the others. */
  pagesPerTeam?: number;
}

/**
 * Checks the team's entries from its mark to `until` while `mayGoOn()` allows; returns its next
 * mark, or undefined when the stretch held no entries (nothing to write).
 */
const sweepTeam = async (
  db: Db,
  queue: () => WebhookQueue,
  teamId: number,
  mark: Mark,
  until: Date,
  now: Date,
  { mayGoOn, pagesPerTeam }: { mayGoOn: () => boolean; pagesPerTeam: number },
  result: WebhookSweep,
): Promise<Mark | undefined> => {
  const { auditEntry, webhookFanout } = db.entities;
  // From the entry a cut-short run ended on (read again: at most one entry twice, and its receipt says so).
  const range = [{ entryId: mark.sweepAfter ?? uuidV7Floor(new Date(mark.sweepFrom)) }, { entryId: uuidV7Floor(until) }] as const;
  const entries = (cursor: string | null) =>
    auditEntry.query
      .byTeam({ teamId })
      .between(...range)
      .go({ cursor, limit: ENTRIES_PAGE, attributes: ['teamId', 'entryId', 'action', 'createdAt', 'ttl'] });
  const done: Mark = { sweepFrom: isoMillis(until) };
  let cursor: string | null = null;
  let reached: Mark | undefined;
  for (let pages = 0; pages < pagesPerTeam; pages++) {
    const page = await entries(cursor);
    const first = page.data[0];
    const last = page.data.at(-1);
    if (!first || !last) return reached && done;
    const receipts = await webhookFanout.query
      .byTeam({ teamId })
      .between({ entryId: first.entryId }, { entryId: last.entryId })
      .go({ pages: 'all', attributes: ['entryId'] });
    const sent = new Set(receipts.data.map((r) => r.entryId));
    const unsent = page.data.filter((e) => !sent.has(e.entryId) && !isExpired(e.ttl, now));
    result.checked += page.data.length;
    result.unsent += unsent.length;
    if (unsent.length > 0) {
      result.messages += await fanOut(db, queue, unsent, now);
      log.info('webhook events sent by the sweep', { teamId, entries: unsent.length });
    }
    cursor = page.cursor;
    if (cursor === null) return done;
    reached = { sweepFrom: mark.sweepFrom, sweepAfter: last.entryId };
    if (!mayGoOn()) break;
  }
  result.caughtUp = false;
  return reached;
};

/**
 * Sends the webhook events of every team whose fan-out was lost, up to WEBHOOK_SWEEP.settleSeconds
 * before `now`, while `mayGoOn()` allows another page. Each team's watermark moves by a conditional
 * update, so two runs that overlap do not move it back. Idempotent: a run cut short anywhere is
 * resumed by the next.
 */
export const sweepWebhookEvents = async (
  db: Db,
  queue: () => WebhookQueue,
  now: Date,
  mayGoOn: () => boolean,
  { pagesPerTeam = PAGES_PER_TEAM }: Options = {},
): Promise<WebhookSweep> => {
  const { webhookCount } = db.entities;
  const until = new Date(now.getTime() - WEBHOOK_SWEEP.settleSeconds * 1000);
  const result: WebhookSweep = { teams: 0, checked: 0, unsent: 0, messages: 0, caughtUp: true };
  let cursor: string | null = null;
  const { finished } = await stepWhile(async () => {
    const page = await webhookCount.query
      .bySweep({})
      .go({ cursor, limit: TEAMS_PAGE, attributes: ['teamId', 'endpoints', 'sweepFrom', 'sweepAfter'] });
    for (const { teamId, endpoints, sweepFrom, sweepAfter } of page.data) {
      if (!sweepFrom || sweepFrom >= isoMillis(until)) continue;
      if (!mayGoOn()) return false;
      let next: Mark | undefined;
      if (!endpoints) {
        // No endpoint: nothing to send, and a later one gets only events after its creation. The
        // watermark moves up once a day, so the team's next endpoint starts the sweep from there.
        if (sweepFrom < isoMillis(addDays(until, -1))) next = { sweepFrom: isoMillis(until) };
      } else {
        next = await sweepTeam(db, queue, teamId, { sweepFrom, sweepAfter }, until, now, { mayGoOn, pagesPerTeam }, result);
        if (next) result.teams++;
      }
      if (!next) continue;
      try {
        const update = webhookCount.patch({ teamId }).set({ sweepFrom: next.sweepFrom });
        await (next.sweepAfter === undefined ? update.remove(['sweepAfter']) : update.set({ sweepAfter: next.sweepAfter }))
          .where((a, op) =>
            [op.eq(a.sweepFrom, sweepFrom), sweepAfter === undefined ? op.notExists(a.sweepAfter) : op.eq(a.sweepAfter, sweepAfter)].join(
              ' AND ',
            ),
          )
          .go();
      } catch (error) {
        // Moved by an overlapping run, or the team's cleanup deleted it: either way, not ours to move.
        if (!isConditionFailure(error)) throw error;
      }
    }
    cursor = page.cursor;
    return cursor !== null;
  }, mayGoOn);
  if (!finished) result.caughtUp = false;
  return result;
};
