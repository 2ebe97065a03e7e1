import type { IHttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import { MathExpression, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { REQUEST_METRICS } from '#lib/core/metric-names.ts';
import { type AlarmSpec, AVAILABILITY_SLO_PERCENT, FIVE_MINUTES, LATENCY_SLO_MS, MIN_RATE_REQUESTS, emf, filledRate } from './metrics.ts';

/**
 * What a caller of the API feels, from API Gateway's own metrics (free, and they include what no
 * function sees: Lambda throttles, integration timeouts, a bundle that fails to load) and the one
 * API-wide RateLimited series. Silent: the `api` composite alarm pages for them.
 */
export const apiAlarms = (api: IHttpApi): AlarmSpec[] => [
  {
    id: 'api-availability',
    section: 'api-availability',
    summary: `At least ${AVAILABILITY_SLO_PERCENT}% of the API's answers in 5 minutes were 5xx (periods under ${MIN_RATE_REQUESTS} requests are not rated).`,
    // The contract allows no 500, and 503 only while DynamoDB is down.
    metric: new MathExpression({
      expression: filledRate('errors', 'requests'),
      usingMetrics: {
        errors: api.metricServerError({ statistic: 'Sum', period: FIVE_MINUTES }),
        requests: api.metricCount({ statistic: 'Sum', period: FIVE_MINUTES }),
      },
      label: '5xx (% of requests)',
      period: FIVE_MINUTES,
    }),
    threshold: AVAILABILITY_SLO_PERCENT,
    evaluationPeriods: 1,
    // FILL and IF give every period a value; were there none, no requests means no errors.
    treatMissingData: TreatMissingData.NOT_BREACHING,
  },
  {
    id: 'api-latency',
    section: 'api-latency',
    summary: `The API's p99 latency reached ${LATENCY_SLO_MS} ms in each of 3 consecutive 5-minute periods.`,
    // Three periods in a row: at low traffic p99 is the slowest request, and one cold start is no outage.
    metric: api.metricLatency({ statistic: 'p99', period: FIVE_MINUTES }),
    threshold: LATENCY_SLO_MS,
    evaluationPeriods: 3,
    // API Gateway publishes latency only for answered requests: none, nothing slow.
    treatMissingData: TreatMissingData.NOT_BREACHING,
  },
  {
    id: 'api-429-rate',
    section: 'api-429-rate',
    summary: "At least 10% of the API's requests were answered 429 rate_limited in each of 3 consecutive 5-minute periods.",
    // Each request publishes RateLimited once, 1 or 0, without dimensions: its average is the share.
    // Rate limiting is the limiter working: only a broad share that lasts 15 minutes counts.
    metric: emf(REQUEST_METRICS.rateLimited, undefined, { statistic: 'Average', period: FIVE_MINUTES }),
    threshold: 0.1,
    evaluationPeriods: 3,
    // No requests, no rate-limited answers.
    treatMissingData: TreatMissingData.NOT_BREACHING,
  },
];
