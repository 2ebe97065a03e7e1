import { type IMetric, MathExpression, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { type AlarmSpec, FIVE_MINUTES, MAX_ALARM_METRICS, MIN_RATE_REQUESTS, TABLE_OPERATIONS, filledRate, filledSum } from './metrics.ts';

/** DynamoDB throttles and system errors per operation and per index, and transaction conflicts. */
export const tableAlarms = (table: ITable, indexNames: readonly string[]): AlarmSpec[] => {
  const perOperation = (metricName: string): Record<string, IMetric> =>
    Object.fromEntries(
      TABLE_OPERATIONS.map((operation) => [
        operation.toLowerCase(),
        table.metric(metricName, {
          dimensionsMap: { TableName: table.tableName, Operation: operation },
          statistic: 'Sum',
          period: FIVE_MINUTES,
        }),
      ]),
    );
  const summed = (metrics: Record<string, IMetric>, label: string): MathExpression => {
    if (Object.keys(metrics).length > MAX_ALARM_METRICS) throw new Error(`${label}: an alarm reads at most ${MAX_ALARM_METRICS} metrics`);
    return new MathExpression({ expression: filledSum(Object.keys(metrics)), usingMetrics: metrics, label, period: FIVE_MINUTES });
  };
  // The SDK retries throttles and system errors: page when they last (2 of 3 five-minute
  // periods), not for one retried blip. FILL gives every period a value: missing data cannot
  // occur; were it to, no requests means no throttles.
  const sustained = { threshold: 1, evaluationPeriods: 3, datapointsToAlarm: 2, treatMissingData: TreatMissingData.NOT_BREACHING };
  return [
    {
      id: 'table-throttles',
      section: 'table-throttles',
      summary: 'DynamoDB throttled requests to the table (any operation, index throttles included) in 2 of the last 3 five-minute periods.',
      metric: summed(perOperation('ThrottledRequests'), 'Throttled requests (all operations)'),
      ...sustained,
    },
    ...indexNames.map((indexName): AlarmSpec => ({
      id: `table-throttles-${indexName}`,
      section: 'index-throttles',
      summary: `DynamoDB throttled reads or writes of the index ${indexName} in 2 of the last 3 five-minute periods.`,
      metric: summed(
        Object.fromEntries(
          (['ReadThrottleEvents', 'WriteThrottleEvents'] as const).map((metricName) => [
            metricName === 'ReadThrottleEvents' ? 'reads' : 'writes',
            table.metric(metricName, {
              dimensionsMap: { TableName: table.tableName, GlobalSecondaryIndexName: indexName },
              statistic: 'Sum',
              period: FIVE_MINUTES,
            }),
          ]),
        ),
        `${indexName} throttle events`,
      ),
      ...sustained,
    })),
    {
      id: 'table-system-errors',
      section: 'table-system-errors',
      // SystemErrors has no index dimension: an index's errors count under the table's operation.
      summary: 'DynamoDB answered system errors (HTTP 500) to the table (any operation) in 2 of the last 3 five-minute periods.',
      metric: summed(perOperation('SystemErrors'), 'System errors (all operations)'),
      ...sustained,
    },
    {
      id: 'table-transaction-conflicts',
      section: 'transaction-conflicts',
      summary: `DynamoDB rejected at least 10 requests for a transaction conflict per 100 write transactions, in 3 consecutive 5-minute periods (periods under ${MIN_RATE_REQUESTS} transactions are not rated).`,
      // DynamoDB's own count (not the EMF TransactionConflicts, which only counts what the code
      // caught): it also counts single-item writes rejected by a transaction in flight.
      metric: new MathExpression({
        expression: filledRate('conflicts', 'transactions'),
        usingMetrics: {
          conflicts: table.metric('TransactionConflict', { statistic: 'Sum', period: FIVE_MINUTES }),
          transactions: table.metric('SuccessfulRequestLatency', {
            dimensionsMap: { TableName: table.tableName, Operation: 'TransactWriteItems' },
            statistic: 'SampleCount',
            period: FIVE_MINUTES,
          }),
        },
        label: 'Transaction conflicts per 100 write transactions',
        period: FIVE_MINUTES,
      }),
      // Races conflict now and then and the code retries: only lasting contention pages.
      threshold: 10,
      evaluationPeriods: 3,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    },
  ];
};
