import { MathExpression, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { REQUEST_METRICS } from '#lib/core/metric-names.ts';
import { type AlarmSpec, FIVE_MINUTES, ONE_MINUTE, type WatchedFunction, durationThresholdMs, emf, filledSum } from './metrics.ts';

/**
 * One function's alarms: its failures (an API function's 5xx, answered or crashed; a background
 * function's errors) and its p99 duration. A gradual deploy rolls back on both.
 */
export const functionAlarms = (watched: WatchedFunction): [failures: AlarmSpec, slow: AlarmSpec] => {
  const { name, fn, kind } = watched;
  const retried = kind === 'stream' || kind === 'queue' || kind === 'schedule';
  const failures: AlarmSpec =
    kind === 'api'
      ? {
          id: `${name}-5xx`,
          section: 'function-5xx',
          summary: `The ${name} function answered 5xx, or crashed before answering, in 2 of the last 5 minutes.`,
          // Its Lambda Errors never counts an answered error (Middy's onError makes each one a
          // response): those are the EMF ServerErrors it emits per request. Errors still counts
          // what the handler never answered: timeouts, out of memory, a bundle that fails to load.
          metric: new MathExpression({
            expression: filledSum(['answered', 'crashed']),
            usingMetrics: {
              answered: emf(REQUEST_METRICS.serverErrors, name, { statistic: 'Sum', period: ONE_MINUTE }),
              crashed: fn.metricErrors({ statistic: 'Sum', period: ONE_MINUTE }),
            },
            label: `${name} 5xx and crashes`,
            period: ONE_MINUTE,
          }),
          // One-minute periods so a canary (minutes long) sees it; two minutes of five, so a lone
          // 503 during a DynamoDB blip does not page, a failing route does.
          threshold: 1,
          evaluationPeriods: 5,
          datapointsToAlarm: 2,
          // FILL gives every period a value; were there none, no requests means no errors.
          treatMissingData: TreatMissingData.NOT_BREACHING,
        }
      : {
          id: `${name}-errors`,
          section: 'function-errors',
          summary: `The ${name} function failed${retried ? ' in 2 of the last 3 five-minute periods' : ''}.`,
          // Background functions throw on failure, so Lambda's Errors counts them.
          metric: fn.metricErrors({ statistic: 'Sum', period: FIVE_MINUTES }),
          threshold: 1,
          // A stream batch or a queue message is retried and a sweeper's next tick catches up: page
          // on repeated failure. A rotation or a bounce notification that fails is lost: page at once.
          ...(retried ? { evaluationPeriods: 3, datapointsToAlarm: 2 } : { evaluationPeriods: 1 }),
          // No invocations, no errors.
          treatMissingData: TreatMissingData.NOT_BREACHING,
        };
  // No throttle alarm per function: `lambda-throttles` watches every function of the account and
  // region at once (a throttled API function also shows in `api-5xx-rate`), and the dashboard
  // shows throttles per function. One alarm per function cost 45 of CloudFormation's 500 resources.
  const thresholdMs = durationThresholdMs(watched);
  const slow: AlarmSpec = {
    id: `${name}-duration`,
    section: 'function-duration',
    summary: `The ${name} function's p99 duration reached ${Math.round(thresholdMs)} ms (timeout ${watched.timeout.toMilliseconds()} ms).`,
    // Lambda's own Duration, not the EMF one: it includes the invocations that time out.
    metric: fn.metricDuration({ statistic: 'p99', period: kind === 'api' ? ONE_MINUTE : FIVE_MINUTES }),
    threshold: thresholdMs,
    // API: 3 of 5 minutes (a canary sees it; one slow cold minute does not page). Background: 2 of 3 five-minute periods.
    ...(kind === 'api' ? { evaluationPeriods: 5, datapointsToAlarm: 3 } : { evaluationPeriods: 3, datapointsToAlarm: 2 }),
    // No invocations, nothing slow.
    treatMissingData: TreatMissingData.NOT_BREACHING,
  };
  return [failures, slow];
};
