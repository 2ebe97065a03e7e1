/** The runbook; each alarm's description ends with `Runbook: docs/operations.md#<section>`. */
export const RUNBOOK = 'docs/operations.md';

/**
 * One section of the runbook per kind of alarm (the anchor is the key), and the first thing to do,
 * which every alarm of that kind carries in its description (CloudWatch sends it in the e-mail).
 */
export const RUNBOOK_SECTIONS = {
  'function-5xx':
    "Read the function's log group for error lines (error code, stack) since the alarm; a gradual deploy rolls itself back, otherwise roll back or fix the cause (DynamoDB alarms first).",
  'function-errors':
    "Read the function's log group for the failed invocations; stream functions retry and then dead-letter, the sweepers catch up on the next tick once the cause is fixed.",
  'function-duration':
    'p99 duration is near the timeout: check DynamoDB latency and throttles, then the slow requests in the log group; timeouts turn into 5xx or retries.',
  'lambda-concurrency':
    'The region\'s Lambda concurrency is nearly used up: request a higher "Concurrent executions" quota (Service Quotas, L-B99A9384) or find the function that surged.',
  'lambda-throttles':
    "Some function in this account and region is throttled: find it (throttles per function on the dashboard), then compare account concurrency with the quota and the function's reserved concurrency; raise the quota or the reservation.",
  'api-5xx-rate':
    "Find the route group with 5xx on the dashboard, then its function's 5xx alarm and log group; 503 unavailable mostly means DynamoDB trouble.",
  'api-429-rate':
    'Many answers are 429 rate_limited: an attack on the credential routes (the limits work; an HTTP API takes no WAF directly: put CloudFront with AWS WAF in front) or limits too tight for real traffic (docs/scale.md).',
  'table-throttles':
    "DynamoDB throttled requests: a hot partition or the on-demand table's throughput ceiling; see throttles by operation on the dashboard.",
  'index-throttles': 'A global secondary index is throttled, which also throttles writes to the table: look for a hot index key.',
  'table-system-errors':
    'DynamoDB answered 5xx: check the AWS Health Dashboard for the region; the SDK retries, the API answers 503 meanwhile.',
  'transaction-conflicts':
    'Many write transactions conflict on the same items (contention): find the route with the most TransactionConflicts and its hot item.',
  'stream-iterator-age':
    'A stream function is falling behind or stuck on a record: read its log group, fix the cause; records that fail every retry go to its dead-letter queue.',
  'dead-letters':
    "Records failed every retry and wait in a dead-letter queue. They point into the table's stream, which keeps records 24 hours: fix the cause, then redrive (mail: npm run outbox:redrive).",
  'dead-letter-age':
    'A dead-letter record has waited 12 hours: its stream record expires at 24 hours, after which it cannot be redriven from the stream.',
  'webhook-backlog':
    "Webhook messages wait over an hour for their first attempts: deliveries fall behind (receivers that hang take 10 s each). Read the webhook-delivery log group; raise the queue mapping's MaximumConcurrency if the account allows.",
  'ses-bounce-rate':
    "The account's SES bounce rate reached the level where SES reviews the account: stop sending to bad addresses (suppression list), check invite sources.",
  'ses-complaint-rate':
    "The account's SES complaint rate reached the level where SES reviews the account: check what was mailed and to whom.",
} as const;

export type RunbookSection = keyof typeof RUNBOOK_SECTIONS;
