import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { afterAll, describe, expect, it } from 'vitest';
import { Endpoint } from '#infra/endpoint.ts';

/**
 * The functions' assets, bundled for real (esbuild, as `cdk synth` does): the same commit gives
 * the same asset hash whatever the output folder, so a deploy from another checkout or CI runner
 * updates no function that did not change; no source map ships unless asked for.
 */
const folders: string[] = [];
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

/**
 * Synthesizes one function (the sign-in route's, with a shipped file) into a fresh output folder
 * `depth` folders below a fresh parent: a source map's `sources` are relative to that folder.
 */
const synth = (options: { sourceMaps?: boolean } = {}, depth = 1) => {
  const outdir = join(mkdtempSync(join(tmpdir(), 'roster-assets-')), ...Array.from({ length: depth }, (_, n) => `d${n}`), 'cdk.out');
  folders.push(outdir);
  const app = new App({ outdir });
  const stack = new Stack(app, 'Assets');
  new Endpoint(stack, 'SignIn', { name: 'auth-signin', files: ['lib/auth/common-passwords.json'], ...options });
  const assembly = app.synth();
  const template = assembly.getStackByName('Assets').template as {
    Resources: Record<string, { Type: string; Properties: Record<string, unknown> }>;
  };
  const fn = Object.values(template.Resources).find((r) => r.Type === 'AWS::Lambda::Function');
  const key = String((fn?.Properties.Code as { S3Key: unknown }).S3Key);
  const hash = key.replace(/\.zip$/, '');
  return { hash, files: readdirSync(join(assembly.directory, `asset.${hash}`)).sort(), environment: fn?.Properties.Environment };
};

describe('function assets', () => {
  it('hash the same from output folders at different depths; ship the bundle and its files, no source map', () => {
    const first = synth({}, 1);
    const second = synth({}, 3);
    expect(second.hash).toBe(first.hash);
    expect(first.files).toEqual(['common-passwords.json', 'index.mjs']);
  }, 120_000);

  it('ship the source map and load it only with sourceMaps, whose paths then tell the folders apart', () => {
    const mapped = synth({ sourceMaps: true }, 1);
    expect(mapped.files).toEqual(['common-passwords.json', 'index.mjs', 'index.mjs.map']);
    expect(mapped.environment).toMatchObject({ Variables: { NODE_OPTIONS: '--enable-source-maps' } });
    // What the default avoids: with maps, another depth is another hash.
    expect(synth({ sourceMaps: true }, 3).hash).not.toBe(mapped.hash);
  }, 120_000);
});
