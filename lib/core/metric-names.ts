/**
 * The CloudWatch metrics Roster emits (embedded metric format, one JSON log line: lib/core/metrics.ts)
 * and the stack alarms and draws its dashboard on (infra/monitoring/). Pure data, like the route
 * table, so that `cdk synth` loads no application code.
 *
 * Every custom metric series costs $0.30 a month in each hour it receives data, so the set is
 * bounded: no dimension takes a value per function, user or team. What Lambda, API Gateway or
 * DynamoDB publish for free (invocations, durations, request counts, latencies, capacity units,
 * transaction conflicts) stays a field of the line, for Logs Insights, and is not published again.
 */
export const METRIC_NAMESPACE = 'Roster';

/** The request line's field naming its function (a route name, FALLBACK): a log field, not a dimension. */
export const FUNCTION_FIELD = 'Function';

/** The one dimension of the per-route-group request metrics: routeGroup of the function's name. */
export const ROUTE_GROUP_DIMENSION = 'RouteGroup';

/** Route group names that are not the name's first word: the lone routes join their kin. */
const GROUP_ALIASES: Readonly<Record<string, string>> = { jwks: 'auth', openid: 'auth', openapi: 'docs' };

/** `teams-create` -> `teams`, `my-invites-list` -> `my-invites`, `jwks` -> `auth`, `fallback` -> `fallback`. */
export const routeGroup = (name: string): string => {
  const [first = name, second] = name.split('-');
  if (first === 'my' && second) return `my-${second}`;
  return GROUP_ALIASES[first] ?? first;
};

/** The values of every API request's line. */
export const REQUEST_METRICS = {
  /** Every answered request (1): a field; Lambda's Invocations and API Gateway's Count publish it. */
  requests: 'Requests',
  /** 1 for an answer with a 5xx status: published per route group, since Middy makes every error an answer Lambda counts as a success. */
  serverErrors: 'ServerErrors',
  /** 1 for an answer 429 `rate_limited`, else 0: published once for the whole API, so its average is the share. */
  rateLimited: 'RateLimited',
  /** Handler time from the event to the response (milliseconds): a field; Lambda's Duration publishes it. */
  duration: 'Duration',
  /** DynamoDB requests the request made and the capacity units they consumed: fields; DynamoDB publishes the table's units. */
  dynamodbRequests: 'DynamoDBRequests',
  dynamodbReadUnits: 'DynamoDBReadUnits',
  dynamodbWriteUnits: 'DynamoDBWriteUnits',
} as const;

type RequestMetric = (typeof REQUEST_METRICS)[keyof typeof REQUEST_METRICS];

/** The request values published as metrics, each with its dimension set (none: one series for the API); the rest are fields only. */
export const PUBLISHED_REQUEST_METRICS: Readonly<Partial<Record<RequestMetric, readonly string[]>>> = {
  [REQUEST_METRICS.serverErrors]: [ROUTE_GROUP_DIMENSION],
  [REQUEST_METRICS.rateLimited]: [],
};

/** Domain events, without dimensions (one time series each). */
export const EVENT_METRICS = {
  signInSucceeded: 'SignInSucceeded',
  signInFailed: 'SignInFailed',
  signInLimited: 'SignInLimited',
  signUps: 'SignUps',
  refreshReuseDetected: 'RefreshReuseDetected',
  invitesCreated: 'InvitesCreated',
  invitesSent: 'InvitesSent',
  invitesAccepted: 'InvitesAccepted',
  invitesDeclined: 'InvitesDeclined',
  /** SES bounce and complaint notifications for Roster's mail (functions/mail-events.ts). */
  mailBounced: 'MailBounced',
  mailComplained: 'MailComplained',
  /** Mail refused before sending because the address is suppressed. */
  mailSuppressed: 'MailSuppressed',
  /** From an outbox message's creation to its send (milliseconds), per sent message. */
  outboxLag: 'OutboxLag',
  /** Outbox messages the sweeper found stuck and delivered again (count). */
  outboxRedelivered: 'OutboxRedelivered',
  /**
   * Write transactions DynamoDB cancelled for a conflict with another one (count, before the retry):
   * a field only, DynamoDB publishes the table's TransactionConflict.
   */
  transactionConflicts: 'TransactionConflicts',
} as const;

/** The domain events that stay fields of the line (UNPUBLISHED); every other event is a metric. */
export const UNPUBLISHED_EVENTS: ReadonlySet<string> = new Set([EVENT_METRICS.transactionConflicts]);
