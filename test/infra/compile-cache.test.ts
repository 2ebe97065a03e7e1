import { build } from 'esbuild';
import { execSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { COMPILE_CACHE_DIR, chmodTree } from '#infra/compile-cache.ts';
import { ESBUILD, TASK_ROOT, afterBundling, compileCacheEnv } from '#infra/endpoint.ts';
import { synth } from './template.ts';

/**
 * The V8 compile cache shipped with each function (infra/compile-cache.ts): every function points
 * Node at it in its task root, and the bundling step writes it beside the bundle, where a fresh
 * Node reads it from a read-only copy.
 */
const PROJECT_DIR = fileURLToPath(new URL('../../', import.meta.url));

describe('compile cache', () => {
  it('is off by default: no function is told to read one', () => {
    const built = synth();
    for (const name of [...built.stack.endpoints.keys(), ...built.stack.background.keys()]) {
      expect(Object.keys(built.allVariables(name)), name).not.toContain('NODE_COMPILE_CACHE');
    }
  });

  it('with -c compileCache=true, is read by every function from its task root, in portable mode', () => {
    const built = synth({ compileCache: 'true' });
    const names = [...built.stack.endpoints.keys(), ...built.stack.background.keys()];
    expect(names.length).toBeGreaterThan(40);
    for (const name of names) {
      expect(built.allVariables(name), name).toMatchObject({
        NODE_COMPILE_CACHE: `${TASK_ROOT}/${COMPILE_CACHE_DIR}`,
        NODE_COMPILE_CACHE_PORTABLE: '1',
      });
    }
  });

  const dir = mkdtempSync(join(tmpdir(), 'roster-compile-cache-'));
  afterAll(() => {
    chmodTree(dir, 0o755, 0o644);
    rmSync(dir, { recursive: true, force: true });
  });

  it('is written beside the bundle by the bundling step, readable by all, and read from a read-only copy', async () => {
    const code = join(dir, 'code');
    mkdirSync(code);
    const entry = join(PROJECT_DIR, 'functions/teams-get.ts');
    await build({ ...ESBUILD, entryPoints: [entry], outfile: join(code, 'index.mjs'), logLevel: 'silent' });
    for (const command of afterBundling(PROJECT_DIR, code, [], true)) execSync(command, { cwd: PROJECT_DIR, stdio: 'pipe' });

    // One directory per Node version, architecture, V8 flags and user, holding the bundle's entry.
    const cache = join(code, COMPILE_CACHE_DIR);
    const [tag, ...others] = readdirSync(cache);
    expect(others).toEqual([]);
    expect(tag).toMatch(new RegExp(`^${process.version}-${process.arch}-`));
    const entries = readdirSync(join(cache, tag as string));
    expect(entries.length).toBeGreaterThan(0);
    for (const file of entries) expect(statSync(join(cache, tag as string, file)).mode & 0o444).toBe(0o444);

    // Moved elsewhere (as the zip to /var/task) and read-only: V8 accepts the entry and Node writes nothing.
    const taskRoot = join(dir, 'task');
    cpSync(code, taskRoot, { recursive: true });
    chmodTree(taskRoot, 0o555, 0o444);
    const script = `const { handler } = await import(${JSON.stringify(join(taskRoot, 'index.mjs'))}); console.log(typeof handler);`;
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 30_000,
      // NODE_DEBUG_NATIVE makes Node say what it did with the cache (its wording, on stderr).
      env: { PATH: process.env.PATH, NODE_DEBUG_NATIVE: 'COMPILE_CACHE', ...compileCacheEnv(taskRoot) },
    });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout.trim()).toBe('function');
    expect(run.stderr).toMatch(/V8 code cache for ESM file:\/\/\S+\/task\/index\.mjs was accepted/);
  });
});
