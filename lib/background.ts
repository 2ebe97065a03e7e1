/**
 * The functions that are not routes and work in the background: their names, DynamoDB grants and
 * limits, for the stack, the local stream poller and timers, and the tests. Pure data, like the
 * route table (lib/http/routes.ts), so that `cdk synth` loads no application code.
 */
import type { IndexName } from './db/table.ts';
import type { DynamoAction } from './http/routes.ts';

/** The cleanup of deleted teams (lib/team-cleanup.ts), fed by the table's stream. */
export const TEAM_CLEANUP = {
  name: 'team-cleanup',
  /** Read the job; Query the partition and gsi1; delete in batches; record progress; delete the job. */
  actions: ['GetItem', 'Query', 'BatchWriteItem', 'UpdateItem', 'DeleteItem'] as const satisfies readonly DynamoAction[],
  indexes: ['gsi1'] as const satisfies readonly IndexName[],
  timeoutSeconds: 120,
  /** A run starts no new batch with less time than this left: a batch takes well under a second. */
  reserveSeconds: 15,
  /** Stream records per invocation: one job, so each run has the whole time budget for it. */
  batchSize: 1,
} as const;

/** The sweeper of expired invites (lib/invite-sweep.ts), on a schedule. */
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
  /** A run starts no new page with less time left: a page's sends may each take SMTP_SEND_TIMEOUT_MS (15 s). */
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
