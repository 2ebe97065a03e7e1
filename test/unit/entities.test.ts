import { readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { build } from 'esbuild';
import { Entity } from 'electrodb';
import { describe, expect, it } from 'vitest';
import { ALIASES, ESBUILD } from '#infra/endpoint.ts';
import { FACTORIES } from '#lib/db/service.ts';

/**
 * The bundles skip ElectroDB's model check (lib/db/models-checked-in-tests.ts): this is where the
 * models are checked, with the real `jsonschema`, as ElectroDB does when it makes an entity. Every
 * entity the service makes (lib/db/service.ts FACTORIES), so a new one cannot be left out.
 */
describe('entity models', () => {
  it.each(Object.entries(FACTORIES))('%s passes ElectroDB’s own model check', (_, factory) => {
    expect(() => factory()).not.toThrow();
  });

  it('the check is live here: a broken model is refused', () => {
    const broken = { model: { entity: 'x', version: '1', service: 'roster' }, attributes: { a: { type: 'no-such-type' } }, indexes: {} };
    expect(() => new Entity(broken as never)).toThrow(/instance\.indexes/);
  });

  it('ElectroDB uses jsonschema for the model check alone, so the bundles lose nothing else', () => {
    const src = join(dirname(createRequire(import.meta.url).resolve('electrodb')), 'src');
    const users = readdirSync(src).filter((file) => readFileSync(join(src, file), 'utf8').includes('jsonschema'));
    expect(users).toEqual(['validations.js']);
    // Its one validator is used by validateModel only (an upgrade that used it more fails here).
    const validations = readFileSync(join(src, 'validations.js'), 'utf8');
    const body = validations.slice(validations.indexOf('function validateModel'), validations.indexOf('function testModel'));
    expect(validations.match(/\bv\.validate\(/g)?.length).toBe(body.match(/\bv\.validate\(/g)?.length);
  });

  it('only the bundles leave the check out', async () => {
    expect(ALIASES.jsonschema).toMatch(/models-checked-in-tests\.ts$/);
    const result = await build({ ...ESBUILD, entryPoints: ['functions/teams-get.ts'], write: false, metafile: true, logLevel: 'silent' });
    const inputs = Object.keys(result.metafile.inputs);
    expect(inputs.some((path) => path.includes('node_modules/jsonschema/'))).toBe(false);
    expect(inputs).toContain('lib/db/models-checked-in-tests.ts');
  });
});
