import type { DynamoDBRecord } from 'aws-lambda';

/**
 * The event-source filter of each function on the table's stream, as Lambda's filter-pattern JSON
 * (what CDK's FilterCriteria.filter serialises): the stack deploys these, and the local stream
 * poller passes each function only the records its pattern matches.
 */
export type FilterPattern = { readonly [key: string]: readonly string[] | FilterPattern };

export const STREAM_FILTERS = {
  /** New outbox messages (functions/mailer.ts). */
  mailer: { eventName: ['INSERT'], dynamodb: { NewImage: { __edb_e__: { S: ['outboxMessage'] } } } },
  /** A deleted team's cleanup job, written (INSERT) or its progress recorded (MODIFY) (functions/team-cleanup.ts). */
  'team-cleanup': { eventName: ['INSERT', 'MODIFY'], dynamodb: { NewImage: { __edb_e__: { S: ['teamCleanup'] } } } },
  /** New audit entries, each sent to the team's subscribed webhook endpoints (functions/webhook-fanout.ts). */
  'webhook-fanout': { eventName: ['INSERT'], dynamodb: { NewImage: { __edb_e__: { S: ['auditEntry'] } } } },
} as const satisfies Record<string, FilterPattern>;

export type StreamFunction = keyof typeof STREAM_FILTERS;

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

export const passes = (name: StreamFunction, record: DynamoDBRecord): boolean => matchesFilter(STREAM_FILTERS[name], record);
