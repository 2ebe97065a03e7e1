import { type IMetric, MathExpression, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { type AlarmSpec, ONE_MINUTE, filledSum } from './metrics.ts';

/**
 * The operations whose SystemErrors stand for the table's health: every authenticated request
 * reads its session with a BatchGetItem, the lists and the sweepers (every minute, traffic or not)
 * Query, so an outage shows there within a minute. Each metric an alarm reads costs $0.10 a month;
 * an outage that fails only writes still pages, as the API's availability.
 */
export const SYSTEM_ERROR_OPERATIONS = ['BatchGetItem', 'Query'] as const;

/**
 * DynamoDB failing or throttling the table: one alarm, which also suppresses the `api` composite
 * alarm's actions, so that an outage of DynamoDB pages once (here) and not again as the API's
 * 5xx and latency it causes.
 */
export const tableAlarm = (table: ITable): AlarmSpec => {
  const metrics: Record<string, IMetric> = {
    // The base table's throttle events (a hot key: a team item, a rate-limit bucket, a user's partition).
    reads: table.metric('ReadThrottleEvents', { statistic: 'Sum', period: ONE_MINUTE }),
    writes: table.metric('WriteThrottleEvents', { statistic: 'Sum', period: ONE_MINUTE }),
    ...Object.fromEntries(
      SYSTEM_ERROR_OPERATIONS.map((operation) => [
        operation.toLowerCase(),
        table.metric('SystemErrors', {
          dimensionsMap: { TableName: table.tableName, Operation: operation },
          statistic: 'Sum',
          period: ONE_MINUTE,
        }),
      ]),
    ),
  };
  return {
    id: 'table-errors',
    section: 'table-errors',
    summary: `DynamoDB answered system errors (${SYSTEM_ERROR_OPERATIONS.join(', ')}) or throttled the table in 3 of the last 5 minutes.`,
    metric: new MathExpression({
      expression: filledSum(Object.keys(metrics)),
      usingMetrics: metrics,
      label: 'System errors and throttle events',
      period: ONE_MINUTE,
    }),
    threshold: 1,
    // One-minute periods: it must reach ALARM before the API's own alarms do, to suppress them.
    // Three minutes of five: the SDK retries, so a lone blip does not page.
    evaluationPeriods: 5,
    datapointsToAlarm: 3,
    // FILL gives every period a value; were there none, no requests means no errors.
    treatMissingData: TreatMissingData.NOT_BREACHING,
  };
};
