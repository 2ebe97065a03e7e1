import type { IHttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import { MathExpression, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { type AlarmSpec, FIVE_MINUTES, MIN_RATE_REQUESTS, ONE_MINUTE, filledRate, rateLimitedShare } from './metrics.ts';

/** The API's 5xx and 429 rates. */
export const apiAlarms = (api: IHttpApi): AlarmSpec[] => [
  {
    id: 'api-5xx-rate',
    section: 'api-5xx-rate',
    summary: `At least 1% of the API's answers in 5 minutes were 5xx (periods under ${MIN_RATE_REQUESTS} requests are not rated).`,
    // The gateway's own count: it includes what no function metric sees (Lambda throttles,
    // integration timeouts). The contract allows no 500 and 503 only while DynamoDB is down.
    metric: new MathExpression({
      expression: filledRate('errors', 'requests'),
      usingMetrics: {
        errors: api.metricServerError({ statistic: 'Sum', period: FIVE_MINUTES }),
        requests: api.metricCount({ statistic: 'Sum', period: FIVE_MINUTES }),
      },
      label: '5xx (% of requests)',
      period: FIVE_MINUTES,
    }),
    threshold: 1,
    evaluationPeriods: 1,
    // FILL and IF give every period a value; were there none, no requests means no errors.
    treatMissingData: TreatMissingData.NOT_BREACHING,
  },
  {
    id: 'api-429-rate',
    section: 'api-429-rate',
    summary: "At least 10% of the API's requests were answered 429 rate_limited in each of 3 consecutive 5-minute periods.",
    metric: rateLimitedShare(FIVE_MINUTES),
    // Rate limiting is the limiter working: page only when it is broad and lasts 15 minutes.
    // A share, not a percentage: the query is the alarm's only metric (no math around it).
    threshold: 0.1,
    evaluationPeriods: 3,
    // No requests, no rate-limited answers.
    treatMissingData: TreatMissingData.NOT_BREACHING,
  },
];

/** Lambda across the account and region: throttles, and concurrency against the quota. */
export const accountAlarms = (): AlarmSpec[] => [
  {
    id: 'lambda-concurrency',
    section: 'lambda-concurrency',
    summary: 'Lambda concurrency claimed in this account and region reached 80% of the quota in 3 of the last 5 minutes.',
    // ClaimedAccountConcurrency is what Lambda compares with the quota (running unreserved
    // invocations plus every reservation); SERVICE_QUOTA reads the applied quota, so the alarm
    // follows a raised quota. On a fresh account (quota 10) it pages from 8 concurrent
    // invocations: such an account cannot serve production traffic (npm run preflight says so).
    metric: new MathExpression({
      expression: '100 * FILL(claimed, 0) / SERVICE_QUOTA(concurrent)',
      usingMetrics: {
        claimed: LambdaFunction.metricAll('ClaimedAccountConcurrency', { statistic: 'Maximum', period: ONE_MINUTE }),
        concurrent: LambdaFunction.metricAllConcurrentExecutions({ statistic: 'Maximum', period: ONE_MINUTE }),
      },
      label: 'Claimed concurrency (% of quota)',
      period: ONE_MINUTE,
    }),
    threshold: 80,
    evaluationPeriods: 5,
    datapointsToAlarm: 3,
    // Lambda reports nothing while nothing runs: nowhere near the quota.
    treatMissingData: TreatMissingData.NOT_BREACHING,
  },
  {
    id: 'lambda-throttles',
    section: 'lambda-throttles',
    summary: 'Lambda throttled invocations in this account and region (any function) in 2 of the last 3 five-minute periods.',
    metric: LambdaFunction.metricAllThrottles({ statistic: 'Sum', period: FIVE_MINUTES }),
    // Other workloads share the pool: page when throttling lasts, each Roster function has its own alarm.
    threshold: 1,
    evaluationPeriods: 3,
    datapointsToAlarm: 2,
    treatMissingData: TreatMissingData.NOT_BREACHING,
  },
];
