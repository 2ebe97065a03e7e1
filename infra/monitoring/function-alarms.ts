import { MathExpression, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { REQUEST_METRICS } from '#lib/core/metric-names.ts';
import { type AlarmSpec, FIVE_MINUTES, ONE_MINUTE, type WatchedFunction, durationThresholdMs, emf } from './metrics.ts';

/**
 * Per-function alarms: made only for a gradual deploy (silent: what CodeDeploy rolls a canary back
 * on, and inputs of the `api` composite alarm) or with `-c functionAlarms=true` (each pages).
 */

/**
 * One function failing or slow: Lambda's Errors (what the handler never answered: a timeout, out of
 * memory, a bundle that fails to load; a background function's thrown failure) or its p99
 * Duration (Lambda's own, which includes the invocations that time out). One alarm, not two: the
 * composite's rule names each input, and CloudWatch takes 10,240 characters of rule.
 */
export const functionAlarm = (watched: WatchedFunction): AlarmSpec => {
  const { name, fn, kind } = watched;
  const api = kind === 'api';
  // API: one-minute periods, so a five-minute canary sees it. Background: five-minute periods, as
  // a stream batch or queue message is retried and a sweeper's next tick catches up.
  const period = api ? ONE_MINUTE : FIVE_MINUTES;
  const thresholdMs = Math.round(durationThresholdMs(watched));
  return {
    id: `${name}-health`,
    section: 'function-health',
    summary: `The ${name} function failed (Lambda Errors) or its p99 duration reached ${thresholdMs} ms (timeout ${watched.timeout.toMilliseconds()} ms), in 2 of the last 5 ${api ? 'minutes' : 'five-minute periods'}.`,
    metric: new MathExpression({
      expression: `IF(FILL(errors, 0) >= 1, 1, IF(FILL(p99, 0) >= ${thresholdMs}, 1, 0))`,
      usingMetrics: {
        errors: fn.metricErrors({ statistic: 'Sum', period }),
        p99: fn.metricDuration({ statistic: 'p99', period }),
      },
      label: `${name} failing or slow`,
      period,
    }),
    threshold: 1,
    // Two of five: a lone cold minute does not count, a failing version does.
    evaluationPeriods: 5,
    datapointsToAlarm: 2,
    // FILL and IF give every period a value; were there none, no invocations means nothing failed.
    treatMissingData: TreatMissingData.NOT_BREACHING,
  };
};

/**
 * A route group's answered 5xx, which no Lambda metric counts (Middy makes every error an answer):
 * the EMF ServerErrors the group's functions publish. A canary of any function of the group rolls
 * back on it.
 */
export const routeGroupAlarm = (group: string): AlarmSpec => ({
  id: `${group}-5xx`,
  section: 'route-group-5xx',
  summary: `The ${group} routes answered 5xx in 2 of the last 5 minutes.`,
  metric: emf(REQUEST_METRICS.serverErrors, group, { statistic: 'Sum', period: ONE_MINUTE }),
  threshold: 1,
  evaluationPeriods: 5,
  datapointsToAlarm: 2,
  // Published with every answer of the group (0 or 1): none, no requests and no errors.
  treatMissingData: TreatMissingData.NOT_BREACHING,
});
