import { Duration } from 'aws-cdk-lib';
import { Metric, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { type AlarmSpec, FIVE_MINUTES } from './metrics.ts';

/** A dead-letter queue: any message in it, and a message older than half the stream's 24-hour retention. */
export const deadLetterAlarms = (id: string, queue: IQueue, description: string): AlarmSpec[] => {
  // SQS stops publishing a queue's metrics when it is idle for 6 hours, even with messages in it.
  // IGNORE keeps the last state through such gaps: a dead letter nobody touched does not turn
  // into a false OK (a queue that never had a message stays in INSUFFICIENT_DATA, which notifies nobody).
  const keepState = TreatMissingData.IGNORE;
  return [
    {
      id: `${id}-depth`,
      section: 'dead-letters',
      summary: `${description}: the dead-letter queue ${id} holds a message.`,
      metric: queue.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum', period: FIVE_MINUTES }),
      threshold: 1,
      evaluationPeriods: 1,
      treatMissingData: keepState,
    },
    {
      id: `${id}-age`,
      section: 'dead-letter-age',
      summary: `${description}: a message has waited 12 hours in the dead-letter queue ${id}.`,
      metric: queue.metricApproximateAgeOfOldestMessage({ statistic: 'Maximum', period: FIVE_MINUTES }),
      threshold: Duration.hours(12).toSeconds(),
      evaluationPeriods: 1,
      treatMissingData: keepState,
    },
  ];
};

/**
 * A queue whose consumers fall behind: its oldest message waited an hour. SQS leaves messages
 * received 3 times or more out of this metric, so messages waiting for their long retries (the
 * webhook schedule's 2 hours and more come after the third attempt) do not raise it.
 */
export const backlogAlarm = (id: string, queue: IQueue, description: string): AlarmSpec => ({
  id: `${id}-backlog`,
  section: 'webhook-backlog',
  summary: `${description}: a message has waited an hour in ${id} for one of its first three attempts.`,
  metric: queue.metricApproximateAgeOfOldestMessage({ statistic: 'Maximum', period: FIVE_MINUTES }),
  threshold: Duration.hours(1).toSeconds(),
  evaluationPeriods: 3,
  datapointsToAlarm: 3,
  // An idle queue publishes nothing: nothing waits.
  treatMissingData: TreatMissingData.NOT_BREACHING,
});

/** The iterator age of a function fed by the table's stream. */
export const streamAlarm = (fn: IFunction, name: string): AlarmSpec => ({
  id: `${name}-iterator-age`,
  section: 'stream-iterator-age',
  summary: `The ${name} function is 5 minutes or more behind the table's stream.`,
  metric: fn.metric('IteratorAge', { statistic: 'Maximum', period: FIVE_MINUTES }),
  // A DynamoDB outage of a minute or two delays records by about that (issue 11, item 9):
  // 5 minutes means a record is stuck (a failing batch retried) or the function cannot keep up.
  threshold: Duration.minutes(5).toMilliseconds(),
  evaluationPeriods: 1,
  // Lambda reports it per invocation: none means no record waiting on a retry.
  treatMissingData: TreatMissingData.NOT_BREACHING,
});

/**
 * SES's account reputation (the metrics SES itself reviews accounts on). Account-level: they apply
 * whenever this account sends through SES, with or without a configuration set. SES publishes them
 * irregularly: IGNORE keeps the last state through gaps, so a bad rate does not read as OK for want
 * of a new datapoint (an account that never sent stays in INSUFFICIENT_DATA, which notifies nobody).
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
