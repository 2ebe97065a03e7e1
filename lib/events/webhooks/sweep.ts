import { config } from '#lib/core/config.ts';
import { log } from '#lib/core/log.ts';
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
/** The highest team id (16 digits, as the keys pad them). */
const LAST_TEAM = Number.MAX_SAFE_INTEGER;

export interface WebhookSweep {
  /** Teams whose audit log held entries to check. */
  teams: number;
  /** Entries checked. */
  checked: number;
  /** Entries the sweep sent (no receipt, and an endpoint that wants them). */
  sent: number;
  /** The messages those became. */
  messages: number;
  /** Teams whose sweep failed (logged; the next run tries them again). */
  failed: number;
  /** False when the time ran out with teams or entries left (the next run goes on after the last team done). */
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
 * Checks the team's entries from its mark to `until`, at most `pagesPerTeam` pages and while
 * `mayGoOn()` allows; returns its next mark (undefined when the stretch held no entries: nothing
 * to write), and whether the run's time ran out (a team stopped at its page cap is done for this
 * run, and the run goes on to the next team).
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
): Promise<{ next: Mark | undefined; outOfTime: boolean }> => {
  const { auditEntry, webhookFanout } = db.entities;
  // Receipts last WEBHOOK_DELIVERY_LOG_DAYS: an older entry cannot be told from one sent, so a
  // watermark left further back (a sweep stopped for weeks) starts at the receipts' horizon.
  const horizon = uuidV7Floor(addDays(until, 1 - config.webhookDeliveryLogDays));
  // From the entry a cut-short run ended on (read again: at most one entry twice, and its receipt says so).
  const from = [mark.sweepAfter ?? uuidV7Floor(new Date(mark.sweepFrom)), horizon].reduce((a, b) => (a > b ? a : b));
  const to = uuidV7Floor(until);
  const done: Mark = { sweepFrom: isoMillis(until) };
  // A clock stepped back can leave the mark past `until`: nothing to read until it is passed.
  if (from >= to) return { next: undefined, outOfTime: false };
  const entries = (cursor: string | null) =>
    auditEntry.query
      .byTeam({ teamId })
      .between({ entryId: from }, { entryId: to })
      .go({ cursor, limit: ENTRIES_PAGE, attributes: ['teamId', 'entryId', 'action', 'createdAt', 'ttl'] });
  let cursor: string | null = null;
  let reached: Mark | undefined;
  for (let pages = 0; pages < pagesPerTeam; pages++) {
    const page = await entries(cursor);
    const first = page.data[0];
    const last = page.data.at(-1);
    if (!first || !last) return { next: reached && done, outOfTime: false };
    const receipts = await webhookFanout.query
      .byTeam({ teamId })
      .between({ entryId: first.entryId }, { entryId: last.entryId })
      .go({ pages: 'all', attributes: ['entryId'] });
    const had = new Set(receipts.data.map((r) => r.entryId));
    const unsent = page.data.filter((e) => !had.has(e.entryId) && !isExpired(e.ttl, now));
    result.checked += page.data.length;
    // Entries no endpoint wants have no receipt either: the fan-out sends only what some endpoint wants.
    const sent = unsent.length > 0 ? await fanOut(db, queue, unsent, now) : { entries: 0, messages: 0 };
    if (sent.messages > 0) log.info('webhook events sent by the sweep', { teamId, ...sent });
    result.sent += sent.entries;
    result.messages += sent.messages;
    cursor = page.cursor;
    if (cursor === null) return { next: done, outOfTime: false };
    reached = { sweepFrom: mark.sweepFrom, sweepAfter: last.entryId };
    if (!mayGoOn()) {
      result.caughtUp = false;
      return { next: reached, outOfTime: true };
    }
  }
  result.caughtUp = false;
  return { next: reached, outOfTime: false };
};

/** Moves the team's watermark from `read` to `next`, unless an overlapping run moved it first or the team's cleanup deleted it. */
const moveMark = async (db: Db, teamId: number, read: Mark, next: Mark): Promise<void> => {
  const update = db.entities.webhookCount.patch({ teamId }).set({ sweepFrom: next.sweepFrom });
  try {
    await (next.sweepAfter === undefined ? update.remove(['sweepAfter']) : update.set({ sweepAfter: next.sweepAfter }))
      .where((a, op) =>
        [
          op.eq(a.sweepFrom, read.sweepFrom),
          read.sweepAfter === undefined ? op.notExists(a.sweepAfter) : op.eq(a.sweepAfter, read.sweepAfter),
        ].join(' AND '),
      )
      .go({ response: 'none' });
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
};

/**
 * One team: its entries (or, without endpoints, a daily move of its watermark). Returns whether the
 * run's time ran out on it; throws what the table or the queue throws.
 */
const sweepOne = async (
  db: Db,
  queue: () => WebhookQueue,
  team: { teamId: number; endpoints?: number | undefined } & Mark,
  until: Date,
  now: Date,
  options: { mayGoOn: () => boolean; pagesPerTeam: number },
  result: WebhookSweep,
): Promise<boolean> => {
  let next: Mark | undefined;
  let outOfTime = false;
  if (!team.endpoints) {
    // No endpoint: nothing to send, and a later one gets only events after its creation. The
    // watermark moves up once a day, so the team's next endpoint starts the sweep from there.
    if (team.sweepFrom < isoMillis(addDays(until, -1))) next = { sweepFrom: isoMillis(until) };
  } else {
    ({ next, outOfTime } = await sweepTeam(db, queue, team.teamId, team, until, now, options, result));
    if (next) result.teams++;
  }
  if (next) await moveMark(db, team.teamId, team, next);
  return outOfTime;
};

/**
 * Sends the webhook events of every team whose fan-out was lost, up to WEBHOOK_SWEEP.settleSeconds
 * before `now`, while `mayGoOn()` allows another team or page. The teams are taken in id order from
 * after the last one a run cut short finished (its place, `webhookSweep`), round to the first, so
 * every team is reached however many there are. A team that fails is logged and left to the next
 * run; the others go on. Each team's watermark moves by a conditional update, so two runs that
 * overlap do not move it back. Idempotent: a run cut short anywhere is resumed by the next.
 */
export const sweepWebhookEvents = async (
  db: Db,
  queue: () => WebhookQueue,
  now: Date,
  mayGoOn: () => boolean,
  { pagesPerTeam = PAGES_PER_TEAM }: Options = {},
): Promise<WebhookSweep> => {
  const { webhookCount, webhookSweep } = db.entities;
  const until = new Date(now.getTime() - WEBHOOK_SWEEP.settleSeconds * 1000);
  const result: WebhookSweep = { teams: 0, checked: 0, sent: 0, messages: 0, failed: 0, caughtUp: true };
  const place = (await webhookSweep.get({ sweep: 'webhooks' }).go({ consistent: true })).data;
  const start = place?.resumeAfter ?? 0;
  // After the place to the last team, then from the first up to the place.
  const stretches = [[start + 1, LAST_TEAM], ...(start > 0 ? [[1, start]] : [])] as const;
  const teams = (low: number, high: number, cursor: string | null) =>
    webhookCount.query
      .bySweep({})
      .between({ teamId: low }, { teamId: high })
      .go({ cursor, limit: TEAMS_PAGE, attributes: ['teamId', 'endpoints', 'sweepFrom', 'sweepAfter'] });
  let lastDone: number | undefined;
  let outOfTime = false;
  for (const [low, high] of stretches) {
    let cursor: string | null = null;
    do {
      const page = await teams(low, high, cursor);
      for (const team of page.data) {
        const { sweepFrom } = team;
        if (!sweepFrom || sweepFrom >= isoMillis(until)) continue;
        if (!mayGoOn()) {
          result.caughtUp = false;
          outOfTime = true;
          break;
        }
        try {
          outOfTime = await sweepOne(db, queue, { ...team, sweepFrom }, until, now, { mayGoOn, pagesPerTeam }, result);
        } catch (error) {
          result.failed++;
          log.error('webhook sweep of a team failed; the next run tries it again', error, { teamId: team.teamId });
        }
        // A team the time ran out on is not done: the next run starts with it.
        if (outOfTime) break;
        lastDone = team.teamId;
      }
      cursor = outOfTime ? null : page.cursor;
    } while (cursor !== null);
    if (outOfTime) break;
  }
  // Out of time: the next run starts after the last team finished.
  if (outOfTime && lastDone !== undefined) {
    await webhookSweep.put({ sweep: 'webhooks', resumeAfter: lastDone, updatedAt: isoMillis(now) }).go({ response: 'none' });
  }
  return result;
};
