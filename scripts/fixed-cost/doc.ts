/**
 * docs/scale.md's fixed-cost section: the default deployment's monthly cost at zero traffic item by
 * item, and what each monitoring option adds, from the templates (model.ts).
 */
import { type CostItem, PRICES, type TemplateJson, customSeries, fixedCost, notifyingAlarms, total, usd as dollars } from './model.ts';

/** The deployments the section prices: the defaults first, then each option alone on top of them. */
export const CONFIGURATIONS: readonly { readonly label: string; readonly context: Record<string, string> }[] = [
  { label: 'the defaults', context: {} },
  { label: '`-c gradualDeploy=true`', context: { gradualDeploy: 'true' } },
  { label: '`-c functionAlarms=true`', context: { functionAlarms: 'true' } },
  { label: '`-c dashboard=true`', context: { dashboard: 'true' } },
  { label: '`-c sesDomain=example.com`', context: { sesDomain: 'example.com' } },
];

export const MARKERS = {
  start: '<!-- fixed-cost:start (node scripts/fixed-cost.ts writes this section) -->',
  end: '<!-- fixed-cost:end -->',
} as const;

const alarmCount = (templates: readonly TemplateJson[]): number =>
  templates.reduce(
    (sum, t) =>
      sum +
      Object.values(t.Resources ?? {}).filter((r) => r.Type === 'AWS::CloudWatch::Alarm' || r.Type === 'AWS::CloudWatch::CompositeAlarm')
        .length,
    0,
  );

/** The section, from the templates of each of CONFIGURATIONS (in that order). */
export const costSection = (synthesized: readonly (readonly TemplateJson[])[]): string => {
  const [defaults, ...options] = synthesized;
  if (!defaults || options.length !== CONFIGURATIONS.length - 1) throw new Error('one set of templates per configuration');
  const items = fixedCost(defaults);
  const base = total(items);
  const row = (entry: CostItem): string => `| ${entry.item} | ${entry.count} | ${entry.basis} | ${dollars(entry.monthly)} |`;
  const configurationRow = (label: string, templates: readonly TemplateJson[]): string => {
    const cost = total(fixedCost(templates));
    const more = cost === base ? '' : `+${dollars(cost - base)}`;
    return `| ${label} | ${notifyingAlarms(templates)} | ${alarmCount(templates)} | ${dollars(cost)} | ${more} |`;
  };
  const series = customSeries();
  return [
    `The deployment's fixed cost at zero traffic with the defaults: **${dollars(base)} a month**, list`,
    'prices, no free tier (an account has one, shared by all it runs). Read from the synthesized',
    'templates of both stacks, nested stacks included:',
    '',
    '| item | count | how it is priced | a month |',
    '|---|---|---|---|',
    ...items.map(row),
    `| **total** | | | **${dollars(base)}** |`,
    '',
    'Each monitoring option alone, on top of the defaults:',
    '',
    '| deployment | alarms that notify | alarms | a month | more |',
    '|---|---|---|---|---|',
    ...CONFIGURATIONS.map(({ label }, i) => configurationRow(label, synthesized[i] as readonly TemplateJson[])),
    '',
    `Custom metrics (lib/core/metric-names.ts) cost nothing at zero traffic: CloudWatch meters a series by`,
    `the hour it receives data. Under traffic there are at most ${series} series (each route group's 5xx, the`,
    `API's 429 share, the domain events), ${dollars(series * PRICES.customMetric)} a month if every one has data every hour.`,
    'Requests, durations and DynamoDB units stay fields of the request line: Lambda, API Gateway and',
    'DynamoDB publish those for free.',
  ].join('\n');
};

/** `doc` with the text between its markers replaced by `section`. */
export const withCostSection = (doc: string, section: string): string => {
  const start = doc.indexOf(MARKERS.start);
  const end = doc.indexOf(MARKERS.end);
  if (start < 0 || end < start) throw new Error('docs/scale.md has lost its fixed-cost markers');
  return `${doc.slice(0, start + MARKERS.start.length)}\n${section}\n${doc.slice(end)}`;
};
