import { log } from '#lib/core/log.ts';
import { EVENT_METRICS } from '#lib/core/metric-names.ts';
import { recordEvent } from '#lib/core/metrics.ts';
import { isoMillis } from '#lib/core/time.ts';
import { dueShardOf, OUTBOX_SHARDS } from '#lib/db/entities/outbox.ts';
import type { Db } from '#lib/db/service.ts';
import { OUTBOX_SWEEP } from '#lib/http/background.ts';
import { type OutboxFields, outboxRefOf } from './outbox-ref.ts';
import { type Delivery, deliver } from './outbox.ts';
import type { Mailer } from './transports.ts';

/**
 * The outbox sweeper (docs/mail.md, "The sweeper"). The stream hands each new message to the
 * mailer once, with a few retries; a message whose record ran out of them, or whose mailer died
 * mid-send, would otherwise stay unfinished for good. A scheduled run (functions/outbox-sweep.ts)
 * reads the unfinished ones from gsi3, those due at least a grace period ago (PENDING since they
 * were written or released, SENDING since their lease ran out), oldest first, and delivers each
 * through the same deliver() as the mailer. `npm run outbox:redrive` runs it with the operator's age.
 */

/** A run starts no new page with less time than this left (OUTBOX_SWEEP.reserveSeconds). */
export const RESERVE_MS = OUTBOX_SWEEP.reserveSeconds * 1000;

/** Messages read per Query page, all delivered at once: the run's concurrency. */
const PAGE = 10;

/** A message as gsi3 lists it. */
export interface DueMessage extends OutboxFields {
  messageId: string;
  kind: string;
  status: 'PENDING' | 'SENDING' | 'SENT' | 'FAILED';
  dueAt?: string | undefined;
  attempts?: number | undefined;
}

export interface SweepOptions {
  /** Only messages due at least this long before `now`. */
  olderThanMs: number;
  /** Asked before each page: false ends the run, and the next one goes on. */
  mayGoOn: () => boolean;
  /** Epoch milliseconds by which each delivery should return (the invocation's end). */
  deadline?: number;
  /** Told about each message handled: what deliver said, or what it threw. */
  onMessage?: (message: DueMessage, result: { delivery: Delivery } | { error: unknown }) => void;
}

export interface SweepResult {
  /** Messages found due and handed to deliver. */
  found: number;
  /** What deliver said about them; `error`: it threw (left as they are, for the next run). */
  outcomes: Record<Delivery['outcome'] | 'error', number>;
  /** gsi3 Query requests made. */
  queries: number;
  /** False when the time ran out with pages left (the next run goes on). */
  caughtUp: boolean;
}

/**
 * Delivers every unfinished message due by `now - olderThanMs`, shard by shard of gsi3 in turns
 * (a page of each, so one shard's backlog does not starve the others), while `mayGoOn()` allows
 * another page. A message another mailer claimed meanwhile is left to it (the claim decides), and
 * one whose send fails is released due now, behind the others: each run reaches every message once.
 */
export const sweepOutbox = async (db: Db, mailer: Mailer, now: Date, options: SweepOptions): Promise<SweepResult> => {
  const cutoff = isoMillis(new Date(now.getTime() - options.olderThanMs));
  const result: SweepResult = {
    found: 0,
    outcomes: { sent: 0, 'sent-unrecorded': 0, failed: 0, unconfirmed: 0, leased: 0, 'done-before': 0, error: 0 },
    queries: 0,
    caughtUp: true,
  };

  const handle = async (message: DueMessage) => {
    result.found++;
    const ref = outboxRefOf(message);
    try {
      // Only a bug writes such a message; it stays, counted an error each run, for someone to look at.
      if (!ref) throw new Error(`outbox message of kind ${message.kind} lacks the attributes of its kind`);
      const delivery = await deliver(db, mailer, ref, new Date(), {
        ...(options.deadline === undefined ? {} : { deadline: options.deadline }),
      });
      result.outcomes[delivery.outcome]++;
      if (delivery.outcome === 'sent' || delivery.outcome === 'sent-unrecorded') {
        recordEvent(EVENT_METRICS.outboxRedelivered);
        log.info('outbox message redelivered by the sweeper', { messageId: message.messageId, was: message.status, dueAt: message.dueAt });
      }
      options.onMessage?.(message, { delivery });
    } catch (error) {
      result.outcomes.error++;
      log.error('outbox sweep: delivery failed; the next run retries', error, { messageId: message.messageId });
      options.onMessage?.(message, { error });
    }
  };

  let shards = Array.from({ length: OUTBOX_SHARDS }, (_, n) => ({ dueShard: dueShardOf(n), cursor: null as string | null }));
  while (shards.length > 0) {
    const unread: typeof shards = [];
    for (const shard of shards) {
      if (!options.mayGoOn()) {
        result.caughtUp = false;
        return result;
      }
      const page = await db.entities.outboxMessage.query
        .byDue({ dueShard: shard.dueShard })
        .lte({ dueAt: cutoff })
        .go({ cursor: shard.cursor, limit: PAGE });
      result.queries++;
      await Promise.all(page.data.map(handle));
      if (page.cursor) unread.push({ dueShard: shard.dueShard, cursor: page.cursor });
    }
    shards = unread;
  }
  return result;
};
