/**
 * `npm run cost:doc` (node scripts/fixed-cost.ts): writes docs/scale.md's fixed-cost section (scripts/fixed-cost/doc.ts) from the
 * templates of the app as `cdk synth` builds it, for the defaults and each monitoring option.
 * test/infra/fixed-cost.test.ts fails when the section is not current.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { App, NestedStack, type Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { rosterStacks } from '#infra/stack.ts';
import { CONFIGURATIONS, costSection, withCostSection } from './fixed-cost/doc.ts';
import type { TemplateJson } from './fixed-cost/model.ts';

/** Both stacks' templates and the nested stacks', without bundling (the cost does not depend on the code). */
const templatesOf = (context: Record<string, string>): TemplateJson[] => {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [], ...context } });
  const { data, api } = rosterStacks(app);
  const nested = api.node.findAll().filter((c): c is NestedStack => NestedStack.isNestedStack(c));
  return [data, api, ...nested].map((stack: Stack) => Template.fromStack(stack).toJSON() as TemplateJson);
};

const doc = new URL('../docs/scale.md', import.meta.url);
const section = costSection(CONFIGURATIONS.map(({ context }) => templatesOf(context)));
writeFileSync(doc, withCostSection(readFileSync(doc, 'utf8'), section));
console.log('docs/scale.md: fixed-cost section written from the synthesized templates');
