import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The house rules of lib/ (README "Layout"): every file in a folder, folders in layers that import
 * only downwards, no circle of files, no two folders importing each other, `#lib/…` instead of
 * `../../` chains, and no file past 400 lines.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** lib/'s folders, lowest first: each may import itself and the folders before it, never one after it. */
const LAYERS = ['core', 'db', 'wire', 'limits', 'auth', 'http', 'mail', 'pages', 'events', 'teams', 'identity', 'gotrue', 'openapi'];

/** Files that may pass 400 lines: the route table is one list of data, kept whole so it reads as one. */
const LONG_ALLOWED = new Set(['lib/http/routes.ts']);

const filesUnder = (dir: string): string[] =>
  readdirSync(join(ROOT, dir)).flatMap((name) => {
    const path = join(dir, name);
    return statSync(join(ROOT, path)).isDirectory() ? filesUnder(path) : [path];
  });

const CODE = /\.(ts|mjs|cjs|js)$/;
const SPECIFIER = /(?:\bfrom|\bimport)\s*\(?\s*['"]((?:\.{1,2}\/|#)[^'"]+)['"]/g;

/** The project files `file` imports, as paths from the project root. */
const importsOf = (file: string): { specifier: string; target: string }[] =>
  [...readFileSync(join(ROOT, file), 'utf8').matchAll(SPECIFIER)].map(([, specifier = '']) => ({
    specifier,
    target: specifier.startsWith('#') ? specifier.slice(1) : normalize(join(dirname(file), specifier)),
  }));

const libFiles = filesUnder('lib').filter((f) => CODE.test(f));
const edges = libFiles.flatMap((from) => importsOf(from).map(({ target }) => ({ from, to: target })));
const folderOf = (file: string) => dirname(file);
const layerOf = (file: string) => file.split('/')[1] ?? '';

describe('lib/ layout', () => {
  it('holds no file directly in lib/, and every folder is a known layer', () => {
    expect(filesUnder('lib').filter((f) => dirname(f) === 'lib')).toEqual([]);
    expect([...new Set(libFiles.map(layerOf))].filter((layer) => !LAYERS.includes(layer))).toEqual([]);
  });

  it('imports only from the same layer or a lower one', () => {
    const upward = edges
      .filter(({ from, to }) => to.startsWith('lib/') && LAYERS.indexOf(layerOf(to)) > LAYERS.indexOf(layerOf(from)))
      .map(({ from, to }) => `${from} -> ${to}`);
    expect(upward, upward.join('\n')).toEqual([]);
  });

  it('has no two folders that import each other', () => {
    const pairs = new Set(edges.map(({ from, to }) => `${folderOf(from)} ${folderOf(to)}`));
    const mutual = [...pairs].filter((pair) => {
      const [a = '', b = ''] = pair.split(' ');
      return a < b && pairs.has(`${b} ${a}`);
    });
    expect(mutual, mutual.join('\n')).toEqual([]);
  });

  it('has no circle of imports between files', () => {
    const next = new Map<string, string[]>();
    for (const { from, to } of edges) next.set(from, [...(next.get(from) ?? []), to]);
    const state = new Map<string, 'open' | 'done'>();
    const circles: string[] = [];
    const visit = (file: string, path: string[]) => {
      if (state.get(file) === 'done') return;
      if (state.get(file) === 'open') {
        circles.push([...path.slice(path.indexOf(file)), file].join(' -> '));
        return;
      }
      state.set(file, 'open');
      for (const to of next.get(file) ?? []) visit(to, [...path, file]);
      state.set(file, 'done');
    };
    for (const file of libFiles) visit(file, []);
    expect(circles, circles.join('\n')).toEqual([]);
  });
});

describe('imports and sizes across the project', () => {
  const dirs = ['lib', 'functions', 'infra', 'test', 'bench', 'scripts', 'browser'];
  const code = dirs.flatMap(filesUnder).filter((f) => CODE.test(f));

  // The SDK subsets (infra/sdk-subsets/) name files inside node_modules by path: esbuild's alias of
  // the package's name would also catch its sub-paths. Those are not the project's own files.
  it('climbs at most one folder in a relative import (deeper ones use #lib/, #infra/, …)', () => {
    const climbing = code.flatMap((file) =>
      importsOf(file)
        .filter(({ specifier, target }) => specifier.startsWith('../../') && !target.startsWith('node_modules/'))
        .map(({ specifier }) => `${file}: ${specifier}`),
    );
    expect(climbing, climbing.join('\n')).toEqual([]);
  });

  it('resolves every import to a file of the project', () => {
    const missing = code.flatMap((file) =>
      importsOf(file)
        .filter(({ target }) => !statSync(join(ROOT, target), { throwIfNoEntry: false })?.isFile())
        .filter(({ specifier }) => !specifier.includes('${'))
        .map(({ specifier }) => `${file}: ${specifier}`),
    );
    expect(missing, missing.join('\n')).toEqual([]);
  });

  it('keeps every file of lib/, functions/ and infra/ within 400 lines', () => {
    const long = ['lib', 'functions', 'infra']
      .flatMap(filesUnder)
      .filter((f) => CODE.test(f) && !LONG_ALLOWED.has(f))
      .map((f) => ({ file: relative('.', f), lines: readFileSync(join(ROOT, f), 'utf8').split('\n').length - 1 }))
      .filter(({ lines }) => lines > 400);
    expect(long, long.map(({ file, lines }) => `${file}: ${lines}`).join('\n')).toEqual([]);
  });
});
