/**
 * Writes V8's code cache for one bundled function into its code directory (infra/endpoint.ts runs
 * this after esbuild with `-c compileCache=true`, and bench/bundles.ts on every benchmarked bundle):
 *   node infra/compile-cache.ts <function code dir>
 * Node then reads it instead of compiling the bundle (NODE_COMPILE_CACHE: compileCacheEnv in endpoint.ts):
 * portable mode keys the cache by the bundle's path relative to the cache, so it still matches once
 * the directory is zipped and unpacked as /var/task.
 *
 * Only the import runs: V8 makes the cache when it compiles the module, before anything is called
 * (teams-get's is 240 KB whether or not the handler was called before the cache was written), so
 * functions first compiled during a call are not in it. Importing runs the bundle's top level,
 * which builds objects and sends no request.
 *
 * Node files the cache under `<node version>-<arch>-<V8 flags hash>-<uid>`: a runtime that differs
 * in any of these looks in another directory, finds nothing and compiles as without a cache (it
 * cannot create the directory in the read-only task root, and says nothing); V8 also refuses an
 * entry whose checksum or source does not match, again falling back to compiling.
 */
import { createHash } from 'node:crypto';
import { chmodSync, cpSync, existsSync, readFileSync, readdirSync } from 'node:fs';
import module from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The cache's directory inside a function's code; compileCacheEnv (endpoint.ts) points Node at it. */
export const COMPILE_CACHE_DIR = '.node-compile-cache';

/** Sets the mode of a directory, of its subdirectories and of their files. */
export const chmodTree = (path: string, dirMode: number, fileMode: number): void => {
  chmodSync(path, dirMode);
  for (const entry of readdirSync(path, { withFileTypes: true })) {
    const child = join(path, entry.name);
    if (entry.isDirectory()) chmodTree(child, dirMode, fileMode);
    else chmodSync(child, fileMode);
  }
};

/**
 * V8's cache differs from run to run for the same bundle, and CDK hashes a function's code after
 * bundling: a new cache each synth would make every deploy update every function (and shift each
 * through CodeDeploy with gradualDeploy). So a bundle's cache is made once per Node, architecture
 * and user and kept here, keyed by the bundle's bytes: the same bundle gets the same cache bytes.
 */
const STORE = fileURLToPath(new URL('../node_modules/.cache/roster-compile-cache/', import.meta.url));

const writeCache = async (codeDir: string): Promise<void> => {
  const directory = join(codeDir, COMPILE_CACHE_DIR);
  const bundle = join(codeDir, 'index.mjs');
  const key = `${createHash('sha256').update(readFileSync(bundle)).digest('hex')}-${process.version}-${process.arch}-${process.getuid?.() ?? 0}`;
  const stored = join(STORE, key);
  if (!existsSync(stored)) {
    const { status, message } = module.enableCompileCache({ directory, portable: true });
    if (status !== module.constants.compileCacheStatus.ENABLED)
      throw new Error(`compile cache not enabled in ${directory}: ${message ?? status}`);
    await import(pathToFileURL(bundle).href);
    module.flushCompileCache();
    cpSync(directory, stored, { recursive: true });
  } else cpSync(stored, directory, { recursive: true });
  // Node writes the cache for its user only (0600); Lambda reads the code as another user.
  chmodTree(directory, 0o755, 0o644);
};

if (import.meta.main) {
  const [codeDir] = process.argv.slice(2);
  if (!codeDir) throw new Error('usage: node infra/compile-cache.ts <function code dir>');
  await writeCache(codeDir);
}
