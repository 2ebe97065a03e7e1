import { Duration } from 'aws-cdk-lib';
import { Metric, type IMetric, type MetricOptions, type TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { METRIC_NAMESPACE, ROUTE_GROUP_DIMENSION, routeGroup } from '#lib/core/metric-names.ts';
import { CLEANUP_SWEEP, INVITE_SWEEP, MAILER, MAIL_EVENTS, OUTBOX_SWEEP, TEAM_CLEANUP } from '#lib/http/background.ts';
import { ROUTES } from '#lib/http/routes.ts';
import type { RunbookSection } from './runbook.ts';

/** What every signal's alarms are made of, and the metrics they share. */

// The route groups live beside the metric names (the functions publish by them); infra reads them here.
export { routeGroup };

export interface WatchedFunction {
  /** The handler name: a route name, FALLBACK, or a background function's name. */
  readonly name: string;
  /** The function, or for an API function its `live` alias (Lambda publishes the alias's metrics under its Resource). */
  readonly fn: IFunction;
  readonly timeout: Duration;
  readonly kind: 'api' | 'stream' | 'queue' | 'schedule' | 'rotation' | 'sns';
  /**
   * For a function that stops itself before its timeout (team cleanup, the sweepers: timeout minus
   * their RESERVE_MS): a run that has work left lasts about this long by design, so the duration
   * threshold sits halfway between it and the timeout instead of at 80% of the timeout.
   */
  readonly budget?: Duration;
}

/** A function's p99 duration threshold: 80% of the timeout (DURATION_SHARE), or halfway from a budget to the timeout. */
export const DURATION_SHARE = 0.8;

/**
 * The API's latency objective: 99% of answers within 3 s, measured by API Gateway (cold starts
 * and the gateway included). The slowest warm route, a bulk invitation of 100 rows, takes about
 * 1 s (docs/scale.md); past 3 s a caller sees the API as slow.
 */
export const LATENCY_SLO_MS = 3000;

/** The availability objective: at most 1% of answers 5xx. */
export const AVAILABILITY_SLO_PERCENT = 1;

/** Alarms on metric math may read at most 10 metrics (a hard CloudWatch limit). */
export const MAX_ALARM_METRICS = 10;

/** The rate alarms ignore periods with fewer requests than this: too few to make a rate. */
export const MIN_RATE_REQUESTS = 10;

export const ONE_MINUTE = Duration.minutes(1);

export const FIVE_MINUTES = Duration.minutes(5);

/** The operations the functions call on the table (for per-operation metrics): their grants, plus TransactWriteItems. */
export const TABLE_OPERATIONS: readonly string[] = [
  'TransactWriteItems',
  ...new Set(
    [
      ...ROUTES.flatMap((route) => route.actions),
      ...[TEAM_CLEANUP, INVITE_SWEEP, OUTBOX_SWEEP, CLEANUP_SWEEP, MAILER, MAIL_EVENTS].flatMap((job) => job.actions),
    ]
      // A condition check exists only inside a transaction: it has no metric of its own.
      .filter((action) => action !== 'ConditionCheckItem'),
  ),
];

/** A Roster EMF metric (lib/core/metrics.ts): per route group when `group` is given, else the API-wide series. No unit: EMF sets it. */
export const emf = (metricName: string, group: string | undefined, options: MetricOptions): Metric =>
  new Metric({
    namespace: METRIC_NAMESPACE,
    metricName,
    ...(group === undefined ? {} : { dimensionsMap: { [ROUTE_GROUP_DIMENSION]: group } }),
    ...options,
  });

/** `FILL(a, 0) + FILL(b, 0) + …`: a sum that has a value even when some (or all) of its metrics have none. */
export const filledSum = (ids: readonly string[]): string => ids.map((id) => `FILL(${id}, 0)`).join(' + ');

/**
 * `100 * part / whole` in percent, 0 when the whole is under MIN_RATE_REQUESTS (no rate worth an
 * alarm, and no division by zero); both FILL-wrapped, so every period has a value.
 */
export const filledRate = (part: string, whole: string): string =>
  `IF(FILL(${whole}, 0) >= ${MIN_RATE_REQUESTS}, 100 * FILL(${part}, 0) / FILL(${whole}, 0), 0)`;

export interface AlarmSpec {
  /** Stable and unique: the construct id and, after the stack name, the alarm name. */
  readonly id: string;
  readonly section: RunbookSection;
  /** What happened, in one sentence, before the section's first step. */
  readonly summary: string;
  readonly metric: IMetric;
  readonly threshold: number;
  readonly evaluationPeriods: number;
  readonly datapointsToAlarm?: number;
  readonly treatMissingData: TreatMissingData;
}

export interface WatchedQueue {
  readonly id: string;
  readonly queue: IQueue;
  readonly description: string;
}

export interface WatchedStream {
  readonly name: string;
  readonly fn: IFunction;
}

/** The p99 duration threshold in milliseconds. */
export const durationThresholdMs = ({ timeout, budget }: Pick<WatchedFunction, 'timeout' | 'budget'>): number => {
  const timeoutMs = timeout.toMilliseconds();
  const share = DURATION_SHARE * timeoutMs;
  return budget ? Math.max(share, (budget.toMilliseconds() + timeoutMs) / 2) : share;
};
