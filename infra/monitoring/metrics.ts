import { Duration } from 'aws-cdk-lib';
import { MathExpression, Metric, type IMetric, type MetricOptions, type TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { FUNCTION_DIMENSION, METRIC_NAMESPACE, REQUEST_METRICS } from '#lib/core/metric-names.ts';
import { INVITE_SWEEP, MAIL_EVENTS, OUTBOX_SWEEP, TEAM_CLEANUP } from '#lib/http/background.ts';
import { ROUTES } from '#lib/http/routes.ts';
import type { RunbookSection } from './runbook.ts';

/** What every signal's alarms are made of, and the metrics they share. */

export interface WatchedFunction {
  /** The handler name: a route name, FALLBACK, or a background function's name (also the EMF `Function` dimension). */
  readonly name: string;
  readonly fn: IFunction;
  readonly timeout: Duration;
  readonly kind: 'api' | 'stream' | 'queue' | 'schedule' | 'rotation' | 'sns';
  /**
   * For a function that stops itself before its timeout (team cleanup, the sweepers: timeout minus
   * their RESERVE_MS): a run that has work left lasts about this long by design, so the duration
   * alarm sits halfway between it and the timeout instead of at 80% of the timeout.
   */
  readonly budget?: Duration;
}

/** The p99 duration alarm's threshold: 80% of the timeout (DURATION_SHARE), or halfway from a budget to the timeout. */
export const DURATION_SHARE = 0.8;

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
    [...ROUTES.flatMap((route) => route.actions), ...[TEAM_CLEANUP, INVITE_SWEEP, OUTBOX_SWEEP, MAIL_EVENTS].flatMap((job) => job.actions)]
      // A condition check exists only inside a transaction: it has no metric of its own.
      .filter((action) => action !== 'ConditionCheckItem'),
  ),
];

/** Route group names that are not the name's first word: the lone routes join their kin. */
const GROUP_ALIASES: Readonly<Record<string, string>> = { jwks: 'auth', openid: 'auth', openapi: 'docs' };

/** `teams-create` -> `teams`, `my-invites-list` -> `my-invites`, `jwks` -> `auth`, `fallback` -> `fallback`. */
export const routeGroup = (name: string): string => {
  const [first = name, second] = name.split('-');
  if (first === 'my' && second) return `my-${second}`;
  return GROUP_ALIASES[first] ?? first;
};

/** A Roster EMF metric (lib/core/metrics.ts), per function when `fn` is given. No unit: EMF sets it, and a wrong one hides the data. */
export const emf = (metricName: string, fn: string | undefined, options: MetricOptions): Metric =>
  new Metric({ namespace: METRIC_NAMESPACE, metricName, ...(fn ? { dimensionsMap: { [FUNCTION_DIMENSION]: fn } } : {}), ...options });

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
}

export interface WatchedStream {
  readonly name: string;
  readonly fn: IFunction;
}

/** The p99 duration alarm's threshold in milliseconds. */
export const durationThresholdMs = ({ timeout, budget }: Pick<WatchedFunction, 'timeout' | 'budget'>): number => {
  const timeoutMs = timeout.toMilliseconds();
  const share = DURATION_SHARE * timeoutMs;
  return budget ? Math.max(share, (budget.toMilliseconds() + timeoutMs) / 2) : share;
};

/**
 * The share (0 to 1) of API requests answered 429 rate_limited: one Metrics Insights query over
 * every function's RateLimited (an alarm's metric math may read only 10 metrics, and there are more
 * API functions). Each request emits RateLimited once, 1 or 0, so its average is the share.
 */
export const rateLimitedShare = (period: Duration): MathExpression =>
  new MathExpression({
    expression: `SELECT AVG(${REQUEST_METRICS.rateLimited}) FROM SCHEMA("${METRIC_NAMESPACE}", ${FUNCTION_DIMENSION})`,
    usingMetrics: {},
    label: '429 share (0-1, right)',
    period,
  });
