/**
 * The functions that are not routes and work in the background: their names, DynamoDB grants and
 * limits, for the stack, the local stream poller and timers, and the tests. Pure data, like the
 * route table (lib/http/routes.ts), so that `cdk synth` loads no application code.
 */
import type { IndexName } from '#lib/db/entities/table.ts';
import type { DynamoAction } from './routes.ts';

/**
 * The one reader of the table's stream (functions/stream-dispatch.ts, lib/events/stream-dispatch.ts):
 * it sends each record that starts background work to that work's queue (WORK_QUEUES), so DynamoDB
 * Streams has one reader per shard (it serves at most two without throttling) and one slow consumer
 * cannot hold up another. No table access: only its queues.
 */
export const STREAM_DISPATCH = {
  name: 'stream-dispatch',
  timeoutSeconds: 30,
  /** Records per invocation: at most 10 SendMessageBatch calls per queue. */
  batchSize: 100,
  /** Retries of a batch that could not be queued (halved each time) before its pointer goes to the dead letters (or maxRecordAgeHours, whichever comes first). */
  retryAttempts: 10,
  /**
   * Well under the stream's 24 hours: a record given up for its age is dead-lettered while the
   * stream still holds it, so `npm run replay` can read it back.
   */
  maxRecordAgeHours: 12,
} as const;

/** The cleanup of deleted teams (lib/teams/cleanup.ts), fed by its work queue. */
export const TEAM_CLEANUP = {
  name: 'team-cleanup',
  /** Read the job; Query the partition and gsi1; delete in batches; record progress; delete the job. */
  actions: ['GetItem', 'Query', 'BatchWriteItem', 'UpdateItem', 'DeleteItem'] as const satisfies readonly DynamoAction[],
  indexes: ['gsi1'] as const satisfies readonly IndexName[],
  timeoutSeconds: 120,
  /** A run starts no new batch with less time than this left: a batch takes well under a second. */
  reserveSeconds: 15,
  /** Jobs per invocation, run side by side (each team is its own partition), each with the whole time budget. */
  batchSize: 5,
  /**
   * Invocations at once (the least SQS allows): with batchSize, up to 10 teams cleaned up side by
   * side, within DynamoDB's per-partition limits (one partition a team) and without taking a new
   * account's concurrency (as low as 10) from the API.
   */
  maxConcurrency: 2,
  /**
   * The sweep of jobs whose run was lost (lib/teams/cleanup-sweep.ts): a job untouched this long is
   * started again. Far longer than a job waits in its queue behind others (10 run at once, each run
   * at most TEAM_CLEANUP.timeoutSeconds), so a job merely waiting is not queued twice.
   */
  staleAfterSeconds: 1800,
} as const;

/**
 * The sweep of cleanup jobs whose work queue lost them (lib/teams/cleanup-sweep.ts), on a schedule:
 * it touches each job due (not updated for TEAM_CLEANUP.staleAfterSeconds), and the touch's stream
 * record starts its next run.
 */
export const CLEANUP_SWEEP = {
  name: 'cleanup-sweep',
  /** Query gsi3 for due jobs; touch each (a conditional UpdateItem). */
  actions: ['Query', 'UpdateItem'] as const satisfies readonly DynamoAction[],
  indexes: ['gsi3'] as const satisfies readonly IndexName[],
  timeoutSeconds: 60,
  reserveSeconds: 10,
  everyMinutes: 5,
} as const;

/**
 * The re-check of verified team domains (lib/teams/domains/recheck.ts), on a schedule: each domain
 * whose `checkAfter` has passed is looked up in DNS again; a proof gone lapses it.
 */
export const DOMAIN_RECHECK = {
  name: 'domain-recheck',
  /** Query gsi3 for due domains; read each one's team record; move the next check (UpdateItem), or lapse it (a transaction). */
  actions: ['Query', 'GetItem', 'UpdateItem', 'DeleteItem', 'PutItem'] as const satisfies readonly DynamoAction[],
  indexes: ['gsi3'] as const satisfies readonly IndexName[],
  timeoutSeconds: 60,
  /** A run starts no new domain with less time left: a lookup takes at most 3 s (lib/teams/domains/dns.ts). */
  reserveSeconds: 10,
  everyMinutes: 60,
} as const;

/** The sweeper of expired invites (lib/teams/invites/sweep.ts), on a schedule. */
export const INVITE_SWEEP = {
  name: 'invite-sweep',
  /** Read and write the watermark; Query gsi3; update the invites. */
  actions: ['GetItem', 'PutItem', 'Query', 'UpdateItem'] as const satisfies readonly DynamoAction[],
  indexes: ['gsi3'] as const satisfies readonly IndexName[],
  timeoutSeconds: 60,
  /** A run starts no new page with less time than this left: a page takes well under a second. */
  reserveSeconds: 10,
  everyMinutes: 1,
} as const;

/**
 * The sweeper of outbox messages the stream left behind (lib/mail/outbox-sweep.ts), on a schedule:
 * it finds messages still PENDING, or SENDING past their lease, and delivers them again.
 */
export const OUTBOX_SWEEP = {
  name: 'outbox-sweep',
  /**
   * Query gsi3 for due messages; read each one's invite, team and inviter (or account, or address
   * claim) and suppression; claim it, store its link's token (PutItem), and settle it.
   */
  actions: ['GetItem', 'PutItem', 'Query', 'UpdateItem'] as const satisfies readonly DynamoAction[],
  indexes: ['gsi3'] as const satisfies readonly IndexName[],
  timeoutSeconds: 60,
  /** A run starts no new page with less time left: a page's sends may each take SMTP_SEND_TIMEOUT_MS (12 s). */
  reserveSeconds: 20,
  everyMinutes: 1,
} as const;

/**
 * SES bounce and complaint notifications (functions/mail-events.ts), from the configuration set's
 * SNS topic: each marks its address suppressed, so Roster stops mailing it.
 */
export const MAIL_EVENTS = {
  name: 'mail-events',
  /** One conditional upsert per suppressed address (lib/mail/suppression.ts `suppress`). */
  actions: ['UpdateItem'] as const satisfies readonly DynamoAction[],
  indexes: [] as const satisfies readonly IndexName[],
  timeoutSeconds: 30,
} as const;

/**
 * The fan-out of audit entries to webhook endpoints (lib/events/webhooks/fan-out.ts), fed by the table's
 * stream: each new entry becomes one queue message per endpoint of its team subscribed to its action.
 */
export const WEBHOOK_FANOUT = {
  name: 'webhook-fanout',
  /**
   * Query each team's webhook partition (its endpoints); read and write the entries' receipts
   * (BatchGetItem, BatchWriteItem). Those partitions only (infra/webhooks.ts WEBHOOK_PARTITIONS).
   */
  actions: ['Query', 'BatchGetItem', 'BatchWriteItem'] as const satisfies readonly DynamoAction[],
  timeoutSeconds: 60,
  /** Queued records per invocation (SQS's most): a Query per team and a SendMessageBatch per 10 messages. */
  batchSize: 10,
  /** Invocations at once (the least SQS allows). */
  maxConcurrency: 2,
} as const;

/**
 * The sweep of webhook events whose fan-out was lost (lib/events/webhooks/sweep.ts), on a schedule:
 * for each team that has had an endpoint, its audit entries since its watermark, less those with a
 * receipt, go through the fan-out again.
 */
export const WEBHOOK_SWEEP = {
  name: 'webhook-sweep',
  /**
   * Read and write its place in the team list (GetItem, PutItem); Query gsi3 for the teams, then
   * each team's audit log, receipts and endpoints; read and write receipts (BatchGetItem,
   * BatchWriteItem); move the team's watermark (UpdateItem). Those partitions only
   * (infra/webhooks.ts WEBHOOK_PARTITIONS).
   */
  actions: ['GetItem', 'PutItem', 'Query', 'BatchGetItem', 'BatchWriteItem', 'UpdateItem'] as const satisfies readonly DynamoAction[],
  indexes: ['gsi3'] as const satisfies readonly IndexName[],
  timeoutSeconds: 60,
  reserveSeconds: 10,
  /**
   * Hourly: it catches what the stream's retries (12 hours) and the work queue's (days) gave up
   * on, so minutes do not matter, and an idle run costs a Query per webhook team.
   */
  everyMinutes: 60,
  /**
   * An entry is checked once it is this old: far past the fan-out's usual seconds, so the sweep
   * does not race the stream for each new entry (the receipts settle it when it does).
   */
  settleSeconds: 900,
} as const;

/** The mailer (functions/mailer.ts), fed by its work queue with new outbox messages. */
export const MAILER = {
  name: 'mailer',
  /** Claim and settle outbox messages; read the invite, team, inviter or account; store each link's token (PutItem). */
  actions: ['GetItem', 'UpdateItem', 'PutItem'] as const satisfies readonly DynamoAction[],
  timeoutSeconds: 30,
  /** Messages per invocation (SQS's most), sent 5 at a time. */
  batchSize: 10,
  /** Invocations at once (the least SQS allows); the outbox sweeper sends as well. */
  maxConcurrency: 2,
} as const;

/**
 * The work queues between the stream's reader and the functions that do the work: each function's
 * descriptor and its queue's name (deployed: `<NAME>_QUEUE_URL`, lib/events/queues.ts). A record
 * that fails comes back after workRetrySeconds; after maxReceives it goes to the queue's dead
 * letters, which `npm run replay` moves back (docs/operations.md).
 */
export const WORK_QUEUES = {
  mailer: { fn: MAILER, queue: 'mail', maxReceives: 100 },
  'team-cleanup': { fn: TEAM_CLEANUP, queue: 'cleanup', maxReceives: 100 },
  'webhook-fanout': { fn: WEBHOOK_FANOUT, queue: 'fanout', maxReceives: 100 },
} as const;

export type WorkFunction = keyof typeof WORK_QUEUES;

/** How long a work queue keeps a message: room for an outage of days (its retries span minutes; the sweeps catch the rest). */
export const WORK_RETENTION_DAYS = 4;

/**
 * The wait before a failed record comes back: 1, 2, 4, then every 8 seconds. Short, so work caught
 * by an outage goes on within seconds of the recovery (a mail caught mid-send: its lease, then at
 * most this); 100 receives cover some 13 minutes of outage, and the sweeps whatever lasts longer.
 */
export const workRetrySeconds = (receives: number): number => Math.min(2 ** Math.max(receives - 1, 0), 8);

/**
 * After this many receives, a record whose work failed for a reason that passes (the database or a
 * queue unreachable or throttling, a mail not settled yet) is queued again as a new message, due in
 * WORK_REQUEUE_SECONDS, instead of using up its receives: so an outage of any length sends nothing
 * to the dead letters, and only a record that keeps failing for another reason (a bug) gets there.
 */
export const WORK_REQUEUE_AFTER = 50;

/** How long a record queued again by WORK_REQUEUE_AFTER waits (SQS allows at most 900 s). */
export const WORK_REQUEUE_SECONDS = 300;

/** A work queue's visibility timeout: six times its function's timeout, as Lambda advises for a queue it polls. */
export const workVisibilitySeconds = (fn: { timeoutSeconds: number }): number => fn.timeoutSeconds * 6;

/**
 * The delivery of webhook messages (lib/events/webhooks/dispatch.ts), fed by the webhook queue: one
 * attempt per message received, logged; a failure comes back after the next delay of
 * WEBHOOK_RETRY_DELAYS_SECONDS, and after the last the queue moves the message to its dead letters.
 */
export const WEBHOOK_DELIVERY = {
  name: 'webhook-delivery',
  /**
   * Read the endpoint, the audit entry and the team together; Put the attempt in the delivery log.
   * On those partitions only (infra/webhooks.ts WEBHOOK_PARTITIONS).
   */
  actions: ['BatchGetItem', 'PutItem'] as const satisfies readonly DynamoAction[],
  /** Messages per invocation, delivered at once: each attempt takes at most 10 s (DELIVERY_TIMEOUT_MS). */
  batchSize: 10,
  timeoutSeconds: 30,
  /** The queue's visibility timeout: six times the function's, as Lambda advises for a queue it polls. */
  visibilitySeconds: 180,
  /** How long the queue keeps a message: past the 27.6 hours of retries, with room for an outage. */
  retentionDays: 4,
  /**
   * Invocations at once (the event source's maximum concurrency, the least SQS allows): a burst of
   * events waits in the queue rather than take a new account's concurrency (as low as 10) from the API.
   */
  maxConcurrency: 2,
} as const;

/**
 * The waits between the attempts of one message: immediately, then after 5 seconds, 5 minutes,
 * 30 minutes, 2, 5, 10 and 10 hours (as Standard Webhooks' reference senders do): 8 attempts over
 * 27.6 hours. Each is at most SQS's 12-hour visibility limit.
 */
export const WEBHOOK_RETRY_DELAYS_SECONDS = [5, 300, 1800, 7200, 18_000, 36_000, 36_000] as const;

/** Attempts of one message before the queue moves it to its dead letters (the queue's maxReceiveCount). */
export const WEBHOOK_ATTEMPTS = WEBHOOK_RETRY_DELAYS_SECONDS.length + 1;
