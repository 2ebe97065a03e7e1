import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { renderSchema, TARGET } from '../scripts/schema.ts';

it('src/schema.ts is generated from the current openapi.json', async () => {
  const fresh = await renderSchema();
  expect(readFileSync(TARGET, 'utf8') === fresh, 'src/schema.ts is stale: run `npm run generate` in clients/typescript').toBe(true);
});
