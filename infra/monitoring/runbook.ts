/** The runbook; each alarm's description ends with `Runbook: docs/operations.md#<section>`. */
export const RUNBOOK = 'docs/operations.md';

/**
 * One section of the runbook per kind of alarm (the anchor is the key), and the first thing to do,
 * which every alarm of that kind carries in its description (CloudWatch sends it in the e-mail).
 */
export const RUNBOOK_SECTIONS = {
  api: "Callers see errors, slow answers or refusals: the alarm's reason names the alarm that fired (api-availability, api-latency, api-429-rate, or a function's health); read that section. It stays silent while table-errors is in ALARM.",
  'api-availability':
    "At least 1% of the API's answers are 5xx: find the route group (Logs Insights: status >= 500 by Function, errorCode); 503 unavailable mostly means DynamoDB trouble, a 500 a bug (roll back).",
  'api-latency':
    "The API's p99 latency is past its 3 s objective: find the slow routes (Logs Insights: pct(Duration, 99) by Function), then check DynamoDB latency and throttles.",
  'api-429-rate':
    'Many answers are 429 rate_limited: an attack on the credential routes (the limits work; an HTTP API takes no WAF directly: put CloudFront with AWS WAF in front) or limits too tight for real traffic (docs/scale.md).',
  'function-health':
    'The function crashed, timed out or is near its timeout: read its log group since the alarm; a gradual deploy rolls a canary back by itself, otherwise roll back or fix the cause (DynamoDB first).',
  'route-group-5xx':
    "The route group's functions answered 5xx: a canary of the group is rolled back by CodeDeploy; read the group's log groups for level ERROR lines.",
  'table-errors':
    'DynamoDB answers system errors or throttles the table: check the AWS Health Dashboard for the region (system errors) or a hot key (throttles); the API answers 503 and the background work retries meanwhile.',
  'stream-iterator-age':
    "The table stream's reader is falling behind or stuck on a record: read its log group, fix the cause; records that fail every retry go to the stream's dead letters, replayed by npm run replay.",
  'dead-letters':
    'Messages failed every retry and wait in a dead-letter queue: fix the cause, then replay or redrive them (each queue has its step in the runbook); stream records expire from the stream after 24 hours.',
  backlog:
    "Work waits over an hour in a work queue (mail, team cleanup, webhook fan-out or delivery): read the consuming function's log group for failures or slow calls; raise the mapping's MaximumConcurrency if the account allows.",
  'ses-bounce-rate':
    "The account's SES bounce rate reached the level where SES reviews the account: stop sending to bad addresses (suppression list), check invite sources.",
  'ses-complaint-rate':
    "The account's SES complaint rate reached the level where SES reviews the account: check what was mailed and to whom.",
} as const;

export type RunbookSection = keyof typeof RUNBOOK_SECTIONS;
