/**
 * docs/scale.md's fixed cost at zero traffic is what scripts/fixed-cost/ makes of the synthesized
 * templates (else: node scripts/fixed-cost.ts), and the defaults meet the targets: at most $5 a
 * month, at most 15 alarms that notify.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CONFIGURATIONS, MARKERS, costSection } from '#scripts/fixed-cost/doc.ts';
import { ASSUMPTIONS, MONTH_MINUTES, PRICES, type TemplateJson, fixedCost, notifyingAlarms, total } from '#scripts/fixed-cost/model.ts';
import { synth } from './template.ts';

const templatesOf = (context: Record<string, string>): TemplateJson[] => {
  const { dataJson, templates } = synth(context);
  return [dataJson, ...templates.map((t) => t.json)];
};

const synthesized = CONFIGURATIONS.map(({ context }) => templatesOf(context));
const [defaults = []] = synthesized;

describe('the fixed cost at zero traffic (docs/scale.md)', () => {
  it('is the section docs/scale.md shows (else: node scripts/fixed-cost.ts)', () => {
    const doc = readFileSync(new URL('../../docs/scale.md', import.meta.url), 'utf8');
    const start = doc.indexOf(MARKERS.start) + MARKERS.start.length;
    expect(doc.slice(start, doc.indexOf(MARKERS.end)).trim()).toBe(costSection(synthesized));
  });

  it('is at most $5 a month by default, with at most 15 alarms that notify', () => {
    expect(total(fixedCost(defaults))).toBeLessThanOrEqual(5);
    expect(notifyingAlarms(defaults)).toBeLessThanOrEqual(15);
  });

  it("counts both stacks and the nested stacks' resources", () => {
    const items = fixedCost(defaults);
    const count = (item: string): number | undefined => items.find((i) => i.item.startsWith(item))?.count;
    expect(count('Secrets Manager secrets')).toBe(1);
    expect(count('KMS keys')).toBe(1);
    // With gradual deploys the API functions' alarms live in the nested stacks.
    const gradual = fixedCost(synthesized[CONFIGURATIONS.findIndex((c) => c.context.gradualDeploy)] ?? []);
    expect(gradual.find((i) => i.item.startsWith('Metric alarms'))?.count).toBeGreaterThan(100);
  });
});

describe('the pricing', () => {
  const alarm = (properties: Record<string, unknown>): TemplateJson => ({
    Resources: { A: { Type: 'AWS::CloudWatch::Alarm', Properties: properties } },
  });
  const priceOf = (template: TemplateJson, item: string): number =>
    fixedCost([template]).find((i) => i.item.startsWith(item))?.monthly ?? NaN;

  it('prices an alarm by the metrics it reads, at high resolution dearer, and refuses a Metrics Insights query', () => {
    expect(priceOf(alarm({ MetricName: 'Errors', Period: 60 }), 'Metric alarms')).toBe(PRICES.alarmMetric);
    expect(priceOf(alarm({ MetricName: 'Errors', Period: 10 }), 'Metric alarms')).toBe(PRICES.highResolutionAlarmMetric);
    const math = alarm({
      Metrics: [
        { Id: 'a', MetricStat: { Period: 60 } },
        { Id: 'b', MetricStat: { Period: 60 } },
        { Id: 'e', Expression: 'a + b' },
      ],
    });
    expect(priceOf(math, 'Metric alarms')).toBe(2 * PRICES.alarmMetric);
    expect(() => fixedCost([alarm({ AlarmName: 'q', Metrics: [{ Id: 'q', Expression: 'SELECT MAX(x) FROM y' }] })])).toThrow(
      'Metrics Insights',
    );
  });

  it("prices Lambda's polling of a mapped queue, five pollers with a maximum concurrency, two without, and a stream's not at all", () => {
    const mapping = (source: unknown, scaling?: unknown): TemplateJson => ({
      Resources: {
        Q: { Type: 'AWS::SQS::Queue' },
        T: { Type: 'AWS::DynamoDB::Table' },
        M: {
          Type: 'AWS::Lambda::EventSourceMapping',
          Properties: { EventSourceArn: source, ...(scaling ? { ScalingConfig: scaling } : {}) },
        },
      },
    });
    const perPoller = (ASSUMPTIONS.receivesPerPollerMinute * MONTH_MINUTES * PRICES.sqsPerMillionRequests) / 1e6;
    const polling = (t: TemplateJson): number => priceOf(t, 'SQS receives');
    expect(polling(mapping({ 'Fn::GetAtt': ['Q', 'Arn'] }, { MaximumConcurrency: 2 }))).toBeCloseTo(5 * perPoller, 2);
    expect(polling(mapping({ 'Fn::GetAtt': ['Q', 'Arn'] }))).toBeCloseTo(2 * perPoller, 2);
    expect(polling(mapping({ 'Fn::GetAtt': ['T', 'StreamArn'] }))).toBe(0);
    // An imported queue ARN: the exporting template says what it is.
    const exporting: TemplateJson = {
      Resources: { Q: { Type: 'AWS::SQS::Queue' } },
      Outputs: { O: { Value: { 'Fn::GetAtt': ['Q', 'Arn'] }, Export: { Name: 'X' } } },
    };
    const importing = mapping({ 'Fn::ImportValue': 'X' });
    expect(fixedCost([exporting, importing]).find((i) => i.item.startsWith('SQS'))?.count).toBe(1);
  });

  it('prices a schedule by its runs a month, and only rate() ones', () => {
    const rule = (expression: string): TemplateJson => ({
      Resources: {
        F: { Type: 'AWS::Lambda::Function', Properties: { MemorySize: 1024, Architectures: ['arm64'] } },
        R: {
          Type: 'AWS::Events::Rule',
          Properties: { ScheduleExpression: expression, Targets: [{ Arn: { 'Fn::GetAtt': ['F', 'Arn'] } }] },
        },
      },
    });
    expect(fixedCost([rule('rate(1 minute)')]).find((i) => i.item.startsWith('Scheduled'))?.item).toContain('43,800 a month');
    expect(fixedCost([rule('rate(5 minutes)')]).find((i) => i.item.startsWith('Scheduled'))?.item).toContain('8,760 a month');
    expect(() => fixedCost([rule('cron(0 12 * * ? *)')])).toThrow('only rate() schedules');
  });
});
