import type { DynamoDBRecord } from 'aws-lambda';
import type { WorkFunction } from '#lib/http/background.ts';

/**
 * Which stream records start which background work, as Lambda's filter-pattern JSON (what CDK's
 * FilterCriteria.filter serialises): the stack puts all three on the stream reader's event source
 * (so it is invoked for nothing else), the reader (lib/events/stream-dispatch.ts) sends each record
 * to the work queue of every pattern it matches, and the local stream poller passes the reader
 * only the records one of them matches.
 */
export type FilterPattern = { readonly [key: string]: readonly string[] | FilterPattern };

export const STREAM_FILTERS = {
  /** New outbox messages (functions/mailer.ts). */
  mailer: { eventName: ['INSERT'], dynamodb: { NewImage: { __edb_e__: { S: ['outboxMessage'] } } } },
  /** A deleted team's cleanup job, written (INSERT) or its progress recorded (MODIFY) (functions/team-cleanup.ts). */
  'team-cleanup': { eventName: ['INSERT', 'MODIFY'], dynamodb: { NewImage: { __edb_e__: { S: ['teamCleanup'] } } } },
  /** New audit entries, each sent to the team's subscribed webhook endpoints (functions/webhook-fanout.ts). */
  'webhook-fanout': { eventName: ['INSERT'], dynamodb: { NewImage: { __edb_e__: { S: ['auditEntry'] } } } },
} as const satisfies Record<WorkFunction, FilterPattern>;

/**
 * Lambda's matching for the patterns used here: every key of the pattern must be present; an array
 * lists the values allowed (exact match), an object is matched key by key one level down.
 */
export const matchesFilter = (pattern: FilterPattern, value: unknown): boolean =>
  typeof value === 'object' &&
  value !== null &&
  Object.entries(pattern).every(([key, rule]) => {
    const field = (value as Record<string, unknown>)[key];
    return Array.isArray(rule) ? rule.includes(field as string) : matchesFilter(rule as FilterPattern, field);
  });

/** The work functions whose pattern `record` matches. */
export const consumersOf = (record: DynamoDBRecord): WorkFunction[] =>
  (Object.keys(STREAM_FILTERS) as WorkFunction[]).filter((fn) => matchesFilter(STREAM_FILTERS[fn], record));
