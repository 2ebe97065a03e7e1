import { randomBytes } from 'node:crypto';
import { link, mkdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type Keyset, parseKeyset } from './model.ts';

// The local keyset file, DATA_DIR/signing-keys.json (0600): local mode's private keys (local.ts).

const KEYSET_FILE = 'signing-keys.json';

export const readKeysetFile = async (dir: string): Promise<Keyset | null> => {
  try {
    return parseKeyset(await readFile(join(dir, KEYSET_FILE), 'utf8'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
};

/** Writes the keyset beside the file, 0600, then moves it in (replacing) or links it in (only if absent). */
export const placeKeysetFile = async (dir: string, keyset: Keyset, how: 'replace' | 'create'): Promise<boolean> => {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const file = join(dir, KEYSET_FILE);
  const temp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  await writeFile(temp, `${JSON.stringify(keyset, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
  if (how === 'replace') {
    await rename(temp, file);
    return true;
  }
  try {
    await link(temp, file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false; // another process made it first
    throw error;
  } finally {
    await unlink(temp);
  }
};
