/**
 * The common-password list (CONTRACT.md "Passwords"): the committed data file is exactly what
 * `npm run passwords:update` writes from the installed @zxcvbn-ts/language-common, and only that
 * file, never the package, reaches the functions' bundles.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ESBUILD } from '#infra/endpoint.ts';
import { COMMON_PASSWORDS_FILE, commonPasswordsSource, isCommonPassword } from '#lib/auth/common-passwords.ts';
import { ROUTES } from '#lib/http/routes.ts';
import { COUNT, OUTPUT, renderCommonPasswords, SOURCE_PACKAGE, topDistinct } from '#scripts/common-passwords.ts';

const ROOT = new URL('../../', import.meta.url).pathname;

describe('the committed list', () => {
  it('is exactly what the script writes from the installed package (run `npm run passwords:update` if not)', () => {
    expect(readFileSync(OUTPUT, 'utf8')).toBe(renderCommonPasswords());
  });

  it('holds 10,000 distinct lowercase passwords in rank order, and names its source', () => {
    const data = JSON.parse(readFileSync(OUTPUT, 'utf8')) as { source: string; passwords: string[] };
    const { version } = JSON.parse(readFileSync(join(ROOT, 'node_modules', SOURCE_PACKAGE, 'package.json'), 'utf8')) as { version: string };
    expect(data.source).toBe(`${SOURCE_PACKAGE}@${version}`);
    expect(commonPasswordsSource()).toBe(data.source);
    expect(data.passwords).toHaveLength(COUNT);
    expect(new Set(data.passwords).size).toBe(COUNT);
    expect(data.passwords.every((p) => p === p.toLowerCase())).toBe(true);
    expect(data.passwords.slice(0, 3)).toEqual(['123456', 'password', '12345678']);
  });

  it("is shipped beside the sign-up, password-change and password-reset functions (GoTrue's too), and bundled into none, nor the package", async () => {
    const shippedTo = ROUTES.filter((r) => 'files' in r && (r.files as readonly string[]).includes(COMMON_PASSWORDS_FILE)).map(
      (r) => r.name,
    );
    expect(shippedTo.sort()).toEqual(['auth-reset', 'auth-signup', 'auth-user-update', 'gotrue-signup', 'gotrue-user-update']);
    const { build } = await import('esbuild');
    for (const name of shippedTo) {
      const result = await build({
        ...ESBUILD,
        entryPoints: [join(ROOT, `functions/${name}.ts`)],
        write: false,
        metafile: true,
        logLevel: 'silent',
        absWorkingDir: ROOT,
      });
      const inputs = Object.keys(result.metafile.inputs);
      expect(inputs).not.toContain(COMMON_PASSWORDS_FILE);
      expect(inputs.filter((path) => path.includes('@zxcvbn-ts'))).toEqual([]);
    }
  });
});

describe('topDistinct', () => {
  it('keeps the first spelling of each password, compared case-insensitively, in rank order', () => {
    expect(topDistinct(['Dragon', 'abc', 'DRAGON', 'xyz', 'ABC', 'q'], 3)).toEqual(['dragon', 'abc', 'xyz']);
    expect(topDistinct(['a', 'A'], 5)).toEqual(['a']);
  });
});

describe('isCommonPassword', () => {
  it('refuses the most common passwords in any case', () => {
    for (const password of ['password', '12345678', 'qwerty123', 'PASSWORD', 'Password', 'iloveyou', 'trustno1']) {
      expect(isCommonPassword(password), password).toBe(true);
    }
  });

  it('takes passwords off the list', () => {
    for (const password of ['correct horse battery staple', 'a long enough secret', 'password ', 'x'.repeat(256)]) {
      expect(isCommonPassword(password), password).toBe(false);
    }
  });
});
