/**
 * The CloudWatch metrics Roster emits (embedded metric format, one JSON log line: lib/core/metrics.ts)
 * and the stack alarms and draws its dashboard on (infra/monitoring/). Pure data, like the route
 * table, so that `cdk synth` loads no application code.
 */
export const METRIC_NAMESPACE = 'Roster';

/** The dimension of the per-function request metrics: the route's (or background function's) name. */
export const FUNCTION_DIMENSION = 'Function';

/** Emitted once per API request, with the dimension FUNCTION_DIMENSION. */
export const REQUEST_METRICS = {
  /** Every answered request (count). */
  requests: 'Requests',
  /** Answers with a 5xx status (count): what the API functions' `Errors` metric cannot show, since every error becomes a response. */
  serverErrors: 'ServerErrors',
  /** Answers with 429 `rate_limited` (count). */
  rateLimited: 'RateLimited',
  /** Handler time from the event to the response (milliseconds). */
  duration: 'Duration',
  /** DynamoDB requests the request made (count) and the capacity units they consumed. */
  dynamodbRequests: 'DynamoDBRequests',
  dynamodbReadUnits: 'DynamoDBReadUnits',
  dynamodbWriteUnits: 'DynamoDBWriteUnits',
} as const;

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
  /** Write transactions DynamoDB cancelled for a conflict with another one (count, before the retry). */
  transactionConflicts: 'TransactionConflicts',
} as const;
