import { Duration } from 'aws-cdk-lib';
import { type CfnAlarm, Metric, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { type AlarmSpec, FIVE_MINUTES, type WatchedQueue, type WatchedStream, filledSum } from './metrics.ts';
import type { RunbookSection } from './runbook.ts';

/**
 * An alarm over every member of a kind (every dead-letter queue, every work queue, every stream
 * reader), so that the alarm count does not grow with them. Its metrics are laid out at synthesis,
 * once every watch call has run; a metric math alarm reads at most MAX_ALARM_METRICS, so more
 * members make a second alarm of the kind.
 */
export interface AggregateSpec<T> {
  readonly id: string;
  readonly section: RunbookSection;
  /** What happened, naming the members; with `detail`, each member's description too (when it fits the 1,024 characters). */
  readonly summary: (members: readonly T[], detail: boolean) => string;
  readonly queries: (members: readonly T[]) => CfnAlarm.MetricDataQueryProperty[];
  readonly threshold: number;
  readonly evaluationPeriods: number;
  readonly datapointsToAlarm?: number;
  readonly treatMissingData: TreatMissingData;
}

type Query = CfnAlarm.MetricDataQueryProperty;

/** One metric of an aggregate alarm: `m<i>`, not returned. */
const stat = (i: number, namespace: string, metricName: string, dimensions: Record<string, string>, statistic: string): Query => ({
  id: `m${i}`,
  metricStat: {
    metric: { namespace, metricName, dimensions: Object.entries(dimensions).map(([name, value]) => ({ name, value })) },
    period: FIVE_MINUTES.toSeconds(),
    stat: statistic,
  },
  returnData: false,
});

/** The returned expression over `m0`…: its label names the members. */
const total = (expression: string, label: string): Query => ({ id: 'total', expression, label, returnData: true });

/** The largest of the filled metrics (one metric needs no MAX). */
const filledMax = (count: number): string => {
  const filled = Array.from({ length: count }, (_, i) => `FILL(m${i}, 0)`);
  return filled.length === 1 ? (filled[0] as string) : `MAX([${filled.join(', ')}])`;
};

const names = (members: readonly { id: string }[]): string => members.map((m) => m.id).join(', ');

/** Each queue's description after its id, or nothing. */
const described = (queues: readonly WatchedQueue[], detail: boolean): string =>
  detail ? queues.map((q) => ` ${q.id}: ${q.description.replace(/\s*\(docs\/operations\.md\)$/, '')}.`).join('') : '';

/**
 * Any message in any dead-letter queue. SQS publishes a queue's metrics while it is active: for
 * six hours after a message arrives or any action touches it. A queue that gets a dead letter
 * therefore reports it, and the alarm fires. When every queue has gone quiet the expression has no
 * data, and IGNORE keeps the state: a dead letter nobody touched does not turn into a false OK.
 */
export const deadLetters: AggregateSpec<WatchedQueue> = {
  id: 'dead-letters',
  section: 'dead-letters',
  summary: (queues, detail) => `A dead-letter queue holds a message (any of ${names(queues)}).${described(queues, detail)}`,
  queries: (queues) => [
    ...queues.map(({ queue }, i) => stat(i, 'AWS/SQS', 'ApproximateNumberOfMessagesVisible', { QueueName: queue.queueName }, 'Maximum')),
    total(filledSum(queues.map((_, i) => `m${i}`)), `Dead letters (${names(queues)})`),
  ],
  threshold: 1,
  evaluationPeriods: 1,
  treatMissingData: TreatMissingData.IGNORE,
};

/**
 * Work waiting too long: the oldest message of any work queue waited an hour for one of its first
 * three receives (SQS leaves messages received 3 times or more out of this metric, so a webhook
 * waiting for its long retries does not count). Lambda's pollers keep a mapped queue active, so it
 * always reports.
 */
export const backlog: AggregateSpec<WatchedQueue> = {
  id: 'backlog',
  section: 'backlog',
  summary: (queues, detail) =>
    `A message waited an hour for one of its first receives, in 3 consecutive 5-minute periods (any of ${names(queues)}).${described(queues, detail)}`,
  queries: (queues) => [
    ...queues.map(({ queue }, i) => stat(i, 'AWS/SQS', 'ApproximateAgeOfOldestMessage', { QueueName: queue.queueName }, 'Maximum')),
    total(filledMax(queues.length), `Oldest message, seconds (${names(queues)})`),
  ],
  threshold: Duration.hours(1).toSeconds(),
  evaluationPeriods: 3,
  // An idle queue publishes nothing: nothing waits.
  treatMissingData: TreatMissingData.NOT_BREACHING,
};

/** The readers of the table's stream: how far behind the stream the oldest record of a batch was. */
export const streamBehind: AggregateSpec<WatchedStream> = {
  id: 'stream-iterator-age',
  section: 'stream-iterator-age',
  summary: (streams) => `A reader of the table's stream (${streams.map((s) => s.name).join(', ')}) is 5 minutes or more behind it.`,
  queries: (streams) => [
    ...streams.map(({ fn }, i) => stat(i, 'AWS/Lambda', 'IteratorAge', { FunctionName: fn.functionName }, 'Maximum')),
    total(filledMax(streams.length), `Iterator age, ms (${streams.map((s) => s.name).join(', ')})`),
  ],
  // A DynamoDB outage of a minute or two delays records by about that (issue 11, item 9):
  // 5 minutes means a record is stuck (a failing batch retried) or the reader cannot keep up.
  threshold: Duration.minutes(5).toMilliseconds(),
  evaluationPeriods: 1,
  // Lambda reports it per invocation: none means no record waiting on a retry.
  treatMissingData: TreatMissingData.NOT_BREACHING,
};

/**
 * SES's account reputation (the metrics SES itself reviews accounts on), only when Roster sends
 * through SES. SES publishes them irregularly: IGNORE keeps the last state through gaps, so a bad
 * rate does not read as OK for want of a new datapoint.
 */
export const mailAlarms = (): AlarmSpec[] => {
  const reputation = (metricName: string): Metric =>
    new Metric({ namespace: 'AWS/SES', metricName, statistic: 'Maximum', period: Duration.minutes(15) });
  return [
    {
      id: 'ses-bounce-rate',
      section: 'ses-bounce-rate',
      summary: "The account's SES bounce rate reached 5%.",
      metric: reputation('Reputation.BounceRate'),
      // SES reports rates as fractions; 5% puts the account under review (10% may pause sending).
      threshold: 0.05,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.IGNORE,
    },
    {
      id: 'ses-complaint-rate',
      section: 'ses-complaint-rate',
      summary: "The account's SES complaint rate reached 0.1%.",
      metric: reputation('Reputation.ComplaintRate'),
      // 0.1% puts the account under review (0.5% may pause sending).
      threshold: 0.001,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.IGNORE,
    },
  ];
};
