/**
 * One outage of DynamoDB, simulated on the synthesized template: for an hour every API function's
 * 5xx and duration metrics breach (API Gateway's 5xx and latency, the route groups' ServerErrors,
 * the functions' Lambda Errors and Duration) and so do the table's SystemErrors; everything else
 * (request counts, queues, the stream) stays normal. Minute by minute, each metric alarm is
 * evaluated as CloudWatch does (a datapoint per period, ALARM when M of the last N breach), each
 * composite alarm from its AlarmRule, and each alarm with actions notifies on every change of state
 * unless its actions suppressor holds it back (the suppressor in ALARM, the wait for it, the
 * extension after it). It may notify at most twice: the ALARM and the OK of one alarm.
 */
import { describe, expect, it } from 'vitest';
import { ROUTE_GROUP_DIMENSION } from '#lib/core/metric-names.ts';
import { FALLBACK, ROUTES } from '#lib/http/routes.ts';
import { type Resource, synth } from './template.ts';

type State = 'OK' | 'ALARM';

interface MetricAlarm {
  readonly id: string;
  readonly name: string;
  readonly periodMinutes: number;
  readonly evaluationPeriods: number;
  readonly datapointsToAlarm: number;
  /** Whether a metric it reads breaches during the outage. */
  readonly affected: boolean;
  readonly notifies: boolean;
}

interface Composite {
  readonly id: string;
  readonly name: string;
  readonly rule: string;
  readonly suppressor: string | undefined;
  readonly waitMinutes: number;
  readonly extensionMinutes: number;
  readonly notifies: boolean;
}

const idOfArn = (value: unknown): string => {
  const getAtt = (value as { 'Fn::GetAtt'?: [string, string] })['Fn::GetAtt'];
  if (!getAtt) throw new Error(`not an alarm ARN: ${JSON.stringify(value)}`);
  return getAtt[0];
};

/** A rule's text, each alarm ARN as its logical id. */
const ruleText = (rule: unknown): string =>
  typeof rule === 'string'
    ? rule
    : (rule as { 'Fn::Join': [string, unknown[]] })['Fn::Join'][1].map((p) => (typeof p === 'string' ? p : idOfArn(p))).join('');

/** Evaluates ALARM(x), OK(x), TRUE, FALSE, NOT, AND, OR and parentheses. */
const evaluate = (rule: string, stateOf: (id: string) => State): boolean => {
  const tokens = rule.match(/ALARM\("[^"]+"\)|OK\("[^"]+"\)|TRUE|FALSE|NOT|AND|OR|\(|\)/g) ?? [];
  let i = 0;
  const primary = (): boolean => {
    const token = tokens[i++] ?? '';
    if (token === '(') {
      const value = or();
      i += 1;
      return value;
    }
    if (token === 'NOT') return !primary();
    if (token === 'TRUE' || token === 'FALSE') return token === 'TRUE';
    const [, kind, id] = /^(ALARM|OK)\("(.+)"\)$/.exec(token) ?? [];
    if (!kind || !id) throw new Error(`cannot read ${token} in ${rule}`);
    return stateOf(id) === kind;
  };
  const and = (): boolean => {
    let value = primary();
    while (tokens[i] === 'AND') {
      i += 1;
      value = primary() && value;
    }
    return value;
  };
  const or = (): boolean => {
    let value = and();
    while (tokens[i] === 'OR') {
      i += 1;
      value = and() || value;
    }
    return value;
  };
  return or();
};

/** Every metric a metric alarm reads: namespace, name and its dimensions as JSON. */
const readsOf = (p: Record<string, unknown>): { namespace: string; name: string; dimensions: string }[] => {
  const queries = p.Metrics as
    { MetricStat?: { Metric: { Namespace: string; MetricName: string; Dimensions?: unknown }; Period: number } }[] | undefined;
  if (!queries) return [{ namespace: String(p.Namespace), name: String(p.MetricName), dimensions: JSON.stringify(p.Dimensions ?? []) }];
  return queries.flatMap((q) =>
    q.MetricStat
      ? [
          {
            namespace: q.MetricStat.Metric.Namespace,
            name: q.MetricStat.Metric.MetricName,
            dimensions: JSON.stringify(q.MetricStat.Metric.Dimensions ?? []),
          },
        ]
      : [],
  );
};

const periodOf = (p: Record<string, unknown>): number => {
  const queries = p.Metrics as { MetricStat?: { Period: number } }[] | undefined;
  const seconds = queries ? Math.max(...queries.flatMap((q) => (q.MetricStat ? [q.MetricStat.Period] : []))) : Number(p.Period);
  return seconds / 60;
};

/** The outage's notifications: alarms, in the order they notified, with the state each announced. */
/** One synthesis per configuration: the simulations of one configuration read the same templates. */
const synthesized = new Map<string, ReturnType<typeof synth>>();
const synthOnce = (context: Record<string, string>): ReturnType<typeof synth> => {
  const key = JSON.stringify(context);
  let built = synthesized.get(key);
  if (!built) synthesized.set(key, (built = synth(context)));
  return built;
};

const simulate = (context: Record<string, string>, start: number, minutes: number): { notifications: string[]; alarmed: Set<string> } => {
  const { ofType, logicalId } = synthOnce(context);
  const apiFunctions = [...ROUTES.map((r) => r.name), FALLBACK].map(logicalId);
  const [apiId] = ofType('AWS::ApiGatewayV2::Api')[0] as [string, Resource];
  /** The metrics of an outage of DynamoDB: every API function's 5xx and duration, the table's system errors. */
  const breaches = ({ namespace, name, dimensions }: { namespace: string; name: string; dimensions: string }): boolean =>
    (namespace === 'AWS/ApiGateway' && ['5xx', 'Latency', 'IntegrationLatency'].includes(name) && dimensions.includes(`"${apiId}"`)) ||
    (namespace === 'Roster' && name === 'ServerErrors' && dimensions.includes(ROUTE_GROUP_DIMENSION)) ||
    (namespace === 'AWS/Lambda' && ['Errors', 'Duration'].includes(name) && apiFunctions.some((id) => dimensions.includes(`"${id}"`))) ||
    (namespace === 'AWS/DynamoDB' && name === 'SystemErrors');
  const notifies = (p: Record<string, unknown>): boolean => ((p.AlarmActions ?? []) as unknown[]).length > 0;
  const metricAlarms: MetricAlarm[] = ofType('AWS::CloudWatch::Alarm').map(([id, { Properties: p }]) => ({
    id,
    name: String(p.AlarmName),
    periodMinutes: periodOf(p),
    evaluationPeriods: Number(p.EvaluationPeriods),
    datapointsToAlarm: Number(p.DatapointsToAlarm ?? p.EvaluationPeriods),
    affected: readsOf(p).some(breaches),
    notifies: notifies(p),
  }));
  const composites: Composite[] = ofType('AWS::CloudWatch::CompositeAlarm').map(([id, { Properties: p }]) => ({
    id,
    name: String(p.AlarmName),
    rule: ruleText(p.AlarmRule),
    suppressor: p.ActionsSuppressor === undefined ? undefined : idOfArn(p.ActionsSuppressor),
    waitMinutes: Number(p.ActionsSuppressorWaitPeriod ?? 0) / 60,
    extensionMinutes: Number(p.ActionsSuppressorExtensionPeriod ?? 0) / 60,
    notifies: notifies(p),
  }));

  const state = new Map<string, State>([...metricAlarms, ...composites].map((a) => [a.id, 'OK' as State]));
  const alarmed = new Set<string>();
  const notifications: string[] = [];
  /** Per composite: when its suppressor last left ALARM, and a change held back until it can be told. */
  const lastSuppressed = new Map<string, number>();
  const pending = new Map<string, { state: State; since: number }>();
  const end = start + minutes;
  for (let t = 0; t <= end + 60; t += 1) {
    // A period's datapoint, reported at its end, breaches if the outage overlapped it.
    for (const alarm of metricAlarms) {
      if (t % alarm.periodMinutes !== 0) continue;
      const breaching = Array.from({ length: alarm.evaluationPeriods }, (_, k) => {
        const periodEnd = t - k * alarm.periodMinutes;
        return alarm.affected && periodEnd > start && periodEnd - alarm.periodMinutes < end;
      }).filter(Boolean).length;
      const next: State = breaching >= alarm.datapointsToAlarm ? 'ALARM' : 'OK';
      if (next !== state.get(alarm.id)) {
        state.set(alarm.id, next);
        if (next === 'ALARM') alarmed.add(alarm.name);
        if (alarm.notifies) notifications.push(`${alarm.name} ${next}`);
      }
    }
    for (const composite of composites) {
      const suppressor = composite.suppressor;
      const suppressed = (): boolean =>
        suppressor !== undefined &&
        (state.get(suppressor) === 'ALARM' || t < (lastSuppressed.get(composite.id) ?? -Infinity) + composite.extensionMinutes);
      if (suppressor && state.get(suppressor) === 'ALARM') lastSuppressed.set(composite.id, t);
      const next: State = evaluate(composite.rule, (id) => state.get(id) ?? 'OK') ? 'ALARM' : 'OK';
      if (next !== state.get(composite.id)) {
        state.set(composite.id, next);
        if (next === 'ALARM') alarmed.add(composite.name);
        // A change while suppressed is dropped; otherwise it waits for the suppressor (if any).
        if (composite.notifies) {
          if (suppressed()) pending.delete(composite.id);
          else pending.set(composite.id, { state: next, since: t });
        }
      }
      const held = pending.get(composite.id);
      if (held && suppressed()) pending.delete(composite.id);
      else if (held && t >= held.since + (suppressor ? composite.waitMinutes : 0)) {
        // Told once the wait is over, if the state still holds (counted even if it would be told with the next change).
        pending.delete(composite.id);
        if (state.get(composite.id) === held.state) notifications.push(`${composite.name} ${held.state}`);
      }
    }
  }
  // Conservatively, a composite still in ALARM an hour after the outage is counted as told.
  for (const composite of composites)
    if (composite.notifies && state.get(composite.id) === 'ALARM') notifications.push(`${composite.name} ALARM`);
  return { notifications, alarmed };
};

describe('an outage of DynamoDB', () => {
  for (const [label, context] of [
    ['the defaults', {}],
    ['gradual deploys (per-function alarms, silent)', { gradualDeploy: 'true' }],
  ] as const) {
    // Outages that start at each minute of a 5-minute period: the API's 5-minute alarms may see it before the table's 1-minute one.
    it.each([0, 1, 2, 3, 4])(`notifies at most twice, the table's ALARM and OK, with ${label} (outage from minute 10 + %i)`, (offset) => {
      const { notifications, alarmed } = simulate(context, 10 + offset, 60);
      expect(notifications).toEqual(['Roster-table-errors ALARM', 'Roster-table-errors OK']);
      // The API's alarm did see it: the suppressor, not blindness, kept it quiet.
      expect(alarmed).toContain('Roster-api');
      expect(alarmed).toContain('Roster-api-availability');
      expect(alarmed).toContain('Roster-api-latency');
    });
  }

  it('with functionAlarms each function pages on its own: the price of that option', () => {
    const { notifications } = simulate({ functionAlarms: 'true' }, 10, 60);
    expect(notifications.length).toBeGreaterThan(2);
  });
});
