/**
 * Writes lib/auth/common-passwords.json: the 10,000 most common passwords, in rank order, from
 * the installed @zxcvbn-ts/language-common (a devDependency, so only these entries are bundled).
 * Entries are lowercased and deduplicated. `npm run passwords:update` after upgrading the package;
 * test/unit/common-passwords.test.ts fails while the committed file is stale.
 */
import { dictionary } from '@zxcvbn-ts/language-common';
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

export const SOURCE_PACKAGE = '@zxcvbn-ts/language-common';
export const COUNT = 10_000;
export const OUTPUT = fileURLToPath(new URL('../lib/auth/common-passwords.json', import.meta.url));

/** The first `count` distinct entries of a rank-ordered list, compared case-insensitively. */
export const topDistinct = (ranked: readonly string[], count: number): string[] => {
  const seen = new Set<string>();
  for (const entry of ranked) {
    if (seen.size === count) break;
    seen.add(entry.toLowerCase());
  }
  return [...seen];
};

/** The data file's text, exactly as the script writes it: one entry per line. */
export const renderCommonPasswords = (): string => {
  const { version } = createRequire(import.meta.url)(`${SOURCE_PACKAGE}/package.json`) as { version: string };
  const passwords = topDistinct(dictionary['passwords-common'], COUNT);
  if (passwords.length !== COUNT) throw new Error(`${SOURCE_PACKAGE} has only ${passwords.length} distinct passwords`);
  const lines = passwords.map((p) => JSON.stringify(p)).join(',\n');
  return `{\n"source": ${JSON.stringify(`${SOURCE_PACKAGE}@${version}`)},\n"passwords": [\n${lines}\n]\n}\n`;
};

if (import.meta.main) {
  const text = renderCommonPasswords();
  let before = '';
  try {
    before = readFileSync(OUTPUT, 'utf8');
  } catch {
    // first run
  }
  writeFileSync(OUTPUT, text);
  console.log(`${before === text ? 'unchanged' : 'wrote'} ${OUTPUT}`);
}
