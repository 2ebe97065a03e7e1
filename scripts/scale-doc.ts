/**
 * `npm run scale:doc`: writes docs/scale.md's capacity table from the latest benchmark results
 * (bench/results/latest.json; `npm run bench` makes them). test/unit/scale.test.ts checks it.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { modelTable, withModel } from '#bench/scale-model.ts';

const doc = new URL('../docs/scale.md', import.meta.url);
const results = JSON.parse(readFileSync(new URL('../bench/results/latest.json', import.meta.url), 'utf8')) as Parameters<
  typeof modelTable
>[0];
writeFileSync(doc, withModel(readFileSync(doc, 'utf8'), modelTable(results)));
console.log('docs/scale.md: capacity table written from bench/results/latest.json');
