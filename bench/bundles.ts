import { exec } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { type BuildOptions, type Metafile, build } from 'esbuild';
import { ESBUILD, afterBundling } from '#infra/endpoint.ts';

export interface Bundle {
  name: string;
  /** The function's code as deployed: the bundle, the route's shipped files, and (for COLD_CACHE=on or both) the compile cache that `-c compileCache=true` ships. */
  dir: string;
  /** The .mjs file. */
  file: string;
  bytes: number;
  gzipBytes: number;
  /** Bytes each package (or `roster` for our own code) contributes to the minified output, largest first. */
  packages: { name: string; bytes: number }[];
}

const PROJECT_DIR = fileURLToPath(new URL('../', import.meta.url));
const FUNCTIONS_DIR = join(PROJECT_DIR, 'functions');
const run = promisify(exec);

/** The package an input belongs to: `@scope/name` or `name` after the last node_modules, else our own code. */
const packageOf = (input: string): string => {
  const parts = input.split('node_modules/');
  if (parts.length === 1) return 'roster';
  const [first, second] = (parts.at(-1) as string).split('/');
  return first?.startsWith('@') ? `${first}/${second}` : (first as string);
};

const byPackage = (metafile: Metafile): Bundle['packages'] => {
  const totals = new Map<string, number>();
  for (const output of Object.values(metafile.outputs)) {
    for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
      totals.set(packageOf(input), (totals.get(packageOf(input)) ?? 0) + bytesInOutput);
    }
  }
  return [...totals].map(([name, bytes]) => ({ name, bytes })).sort((a, b) => b.bytes - a.bytes);
};

/** esbuild's output for one entry, written to `<root>/<name>/index.mjs`, with its sizes and packages. */
const buildInto = async (name: string, root: string, options: BuildOptions): Promise<Bundle> => {
  const dir = join(root, name);
  mkdirSync(dir);
  const file = join(dir, 'index.mjs');
  const { metafile } = await build({ ...options, outfile: file, metafile: true, logLevel: 'warning' });
  const code = readFileSync(file);
  return { name, dir, file, bytes: code.length, gzipBytes: gzipSync(code).length, packages: byPackage(metafile) };
};

/**
 * Bundles one entry exactly as the CDK stack does (infra/endpoint.ts ESBUILD, then its
 * afterBundling commands: a route's `files` and, when asked, the compile cache) into a directory of
 * its own under `root`.
 */
export const bundle = async (
  name: string,
  entry: string,
  root: string,
  files: readonly string[],
  compileCache: boolean,
): Promise<Bundle> => {
  const built = await buildInto(name, root, { ...ESBUILD, entryPoints: [entry] });
  // CDK runs these from the project directory, with inputDir the project's path (what is copied).
  for (const command of afterBundling(PROJECT_DIR, built.dir, files, compileCache)) await run(command, { cwd: PROJECT_DIR });
  return built;
};

export const functionEntry = (name: string): string => join(FUNCTIONS_DIR, `${name}.ts`);

/** Every function the stack deploys: the files in functions/. */
export const functionNames = (): string[] =>
  readdirSync(FUNCTIONS_DIR)
    .filter((file) => file.endsWith('.ts'))
    .map((file) => file.slice(0, -'.ts'.length));

/**
 * The baseline (bench/baseline-handler.ts) bundled the plain way, as the anchors bundle theirs:
 * esbuild's bundle, minified ESM for Node 24 with a `require` shim, ESM builds of dependencies
 * first; none of the stack's aliases (SDK subsets, builtin shims), no source map.
 */
export const bundleBaseline = (root: string): Promise<Bundle> =>
  buildInto('baseline', root, {
    entryPoints: [join(PROJECT_DIR, 'bench', 'baseline-handler.ts')],
    bundle: true,
    platform: 'node',
    target: 'node24',
    format: 'esm',
    minify: true,
    mainFields: ['module', 'main'],
    banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" },
  });

/** The floor: a handler that does nothing, bundled the same way. */
export const bundleFloor = (root: string, compileCache: boolean): Promise<Bundle> => {
  const entry = join(root, 'floor.ts');
  writeFileSync(entry, 'export const handler = async () => ({ statusCode: 200 });\n');
  return bundle('floor', entry, root, [], compileCache);
};
