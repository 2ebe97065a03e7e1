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
  everyMinutes: 1,
} as const;
