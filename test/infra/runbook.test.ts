/**
 * Every alarm's description names a section of the runbook (infra/monitoring/runbook.ts RUNBOOK_SECTIONS):
 * each of those must be a heading of docs/operations.md, so that the link an operator is paged with
 * lands on the section that says what to do.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { RUNBOOK, RUNBOOK_SECTIONS } from '#infra/monitoring/runbook.ts';

const headings = readFileSync(new URL(`../../${RUNBOOK}`, import.meta.url), 'utf8')
  .split('\n')
  .filter((line) => line.startsWith('#'))
  .map((line) => line.replace(/^#+\s*/, '').trim());

describe(`the runbook (${RUNBOOK})`, () => {
  it.each(Object.keys(RUNBOOK_SECTIONS))('has a section for the alarms that name #%s', (section) => {
    expect(headings).toContain(section);
  });

  it.each([
    'Deploy',
    'Upgrade',
    'Roll back',
    'Restore the table from point-in-time recovery',
    'Redrive the mail',
    'Rotate a leaked signing key at once',
    'Leave the SES sandbox',
  ])('covers "%s"', (heading) => {
    expect(headings).toContain(heading);
  });
});
