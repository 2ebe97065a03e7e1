import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { describe, expect, it } from 'vitest';
import { NAG_ACKNOWLEDGEMENTS } from '#infra/nag-acknowledgements.ts';
import { STACK_ID, rosterStacks } from '#infra/stack.ts';
import { FUNCTION_STACKS } from '#infra/api-settings.ts';

/**
 * K6: cdk-nag 3.x AwsSolutions on the app, as `cdk synth` builds it (minus bundling): once with the
 * defaults, once with every option that adds resources (SES domain identity, configuration set and
 * its function, tracing, the alarm e-mail, gradual deploys, a sign-in provider and its secret). Errors fail; warnings are reported. Every
 * acknowledgement must come from the reviewed list and still silence a finding that really occurs,
 * so the list cannot go stale or grow unreviewed.
 */
const CONFIGURATIONS = {
  defaults: {},
  everything: {
    sesDomain: 'example.com',
    mailFrom: 'Roster <roster@example.com>',
    tracing: 'true',
    alarmEmail: 'ops@example.com',
    gradualDeploy: 'true',
    oauthProviders: JSON.stringify([{ id: 'google', type: 'oidc', issuer: 'https://accounts.google.com', clientId: 'roster' }]),
    oauthRedirectUrls: 'https://app.example.com/auth/callback',
  },
} as const;

interface Recorded {
  path: string;
  id: string;
  reason: string;
}
const recorded = (node: IConstruct): Recorded[] => [
  ...node.node.metadata
    .filter((entry) => entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
    .flatMap((entry) =>
      Object.entries(entry.data as Record<string, string>).map(([id, reason]) => ({
        path: node.node.path,
        id: id.replace(/^annotation::/i, ''), // CDK qualifies plain ids as annotation rules
        reason,
      })),
    ),
  ...node.node.children.flatMap(recorded),
];

const checked = Object.entries(CONFIGURATIONS).map(([name, context]) => {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [], ...context } });
  rosterStacks(app);
  const report = new AwsSolutionsChecks().validateScope(app);
  // The same checks with acknowledgements ignored: what the app would be flagged for without them.
  // (This reaches into a private method; if cdk-nag renames it, the stale-acknowledgement test fails.)
  const unacknowledged = Object.defineProperty(new AwsSolutionsChecks(), 'isAcknowledged', { value: () => false }).validateScope(app);
  const rawFindings = unacknowledged.violations.flatMap((v) =>
    v.violatingResources.map((r) => ({ id: v.ruleName, path: r.constructPath ?? '' })),
  );
  return { name, report, rawFindings, acknowledgements: recorded(app) };
});

describe.each(checked)('cdk-nag AwsSolutions ($name)', ({ report, rawFindings, acknowledgements }) => {
  it('reports no unacknowledged error', ({ annotate }) => {
    const errors = report.violations.filter((v) => v.severity === 'error');
    expect(errors.map((v) => `${v.ruleName} at ${v.violatingResources.map((r) => r.constructPath).join(', ')}`)).toEqual([]);
    const warnings = report.violations.filter((v) => v.severity === 'warning');
    void annotate(`${warnings.length} warnings${warnings.length ? `: ${warnings.map((v) => v.ruleName).join(', ')}` : ''}`);
  });

  it('acknowledges only from the reviewed list, each with its reason', () => {
    expect(acknowledgements.length).toBeGreaterThan(0);
    const reviewed = Object.values(NAG_ACKNOWLEDGEMENTS).map(({ id, reason }) => `${id}: ${reason}`);
    for (const { id, reason } of acknowledgements) expect(reviewed).toContain(`${id}: ${reason}`);
  });

  it('has no stale acknowledgement: each one silences a finding on its construct or below', () => {
    expect(rawFindings.length).toBeGreaterThan(0);
    for (const ack of acknowledgements) {
      const silenced = rawFindings.filter((f) => f.id === ack.id && (f.path === ack.path || f.path.startsWith(`${ack.path}/`)));
      expect(silenced, `${ack.id} on ${ack.path}`).not.toEqual([]);
    }
  });
});

describe('the nested stacks', () => {
  it("are checked too: each holds API functions' roles, flagged for X-Ray's resource * when traced", () => {
    const traced = checked.find(({ name }) => name === 'everything');
    for (const id of Object.keys(FUNCTION_STACKS)) {
      expect(
        traced?.rawFindings.some((f) => f.path.startsWith(`${STACK_ID}/${id}/`)),
        id,
      ).toBe(true);
    }
  });
});

describe('the reviewed list', () => {
  it('has every entry in use by one configuration or the other', () => {
    const used = new Set(checked.flatMap(({ acknowledgements }) => acknowledgements.map(({ id, reason }) => `${id}: ${reason}`)));
    for (const [name, { id, reason }] of Object.entries(NAG_ACKNOWLEDGEMENTS)) {
      expect(used.has(`${id}: ${reason}`), name).toBe(true);
    }
  });
});
