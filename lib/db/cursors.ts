import { randomBytes } from 'node:crypto';
import { openBytes, sealBytes } from '#lib/core/aead.ts';
import { CURSOR_KEY_ITEM } from './entities/cursor-key.ts';
import type { Db } from './service.ts';
import { isConditionFailure } from './transactions.ts';

/**
 * Opaque list cursors: the start key ElectroDB makes (base64url JSON of table keys, which would
 * show other users' ids) sealed with AES-256-GCM under the deployment's cursor key, with the list's
 * identity (which list, whose: e.g. a team's members) as associated data. A cursor opens only for
 * the list that issued it; one changed, made up or issued by another list is refused.
 * Layout, base64url: lib/core/aead.ts's (nonce, ciphertext of the start key's JSON, tag).
 */
/** The key per table (one per deployment; the tests use one table per file), read once per container. */
const keys = new WeakMap<Db, Promise<Buffer>>();

const readKey = async (db: Db, consistent: boolean): Promise<Buffer | undefined> => {
  const { data } = await db.entities.cursorKey.get(CURSOR_KEY_ITEM).go({ consistent });
  return data ? Buffer.from(data.key, 'base64url') : undefined;
};

/**
 * One GetItem; when there is no key yet, a conditional put of a fresh one. Of two containers that
 * race to create it the second's put fails and it reads the first's (strongly consistent).
 */
const loadKey = async (db: Db): Promise<Buffer> => {
  const stored = await readKey(db, false);
  if (stored) return stored;
  const fresh = randomBytes(32);
  try {
    await db.entities.cursorKey.create({ ...CURSOR_KEY_ITEM, key: fresh.toString('base64url') }).go();
    return fresh;
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
  const winner = await readKey(db, true);
  if (!winner) throw new Error('the cursor key was created and is gone');
  return winner;
};

const cursorKey = (db: Db): Promise<Buffer> => {
  let key = keys.get(db);
  if (!key) {
    key = loadKey(db);
    keys.set(db, key);
    // A failed read is not cached: the next cursor tries again.
    key.catch(() => keys.delete(db));
  }
  return key;
};

/** ElectroDB's cursor for `list`, sealed. */
export const sealCursor = async (db: Db, list: string, startKey: string): Promise<string> =>
  sealBytes(await cursorKey(db), Buffer.from(startKey, 'base64url'), list).toString('base64url');

/** ElectroDB's cursor inside `cursor`, or undefined unless `list` sealed it with this key. */
export const openCursor = async (db: Db, list: string, cursor: string): Promise<string | undefined> => {
  const key = await cursorKey(db);
  try {
    return openBytes(key, Buffer.from(cursor, 'base64url'), list).toString('base64url');
  } catch {
    return undefined;
  }
};
