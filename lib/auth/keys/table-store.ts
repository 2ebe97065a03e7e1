import { SIGNING_KEYS_ITEM } from '#lib/db/entities/keys.ts';
import type { Db } from '#lib/db/service.ts';
import { isConditionFailure } from '#lib/db/transactions.ts';
import type { PublicKey } from './model.ts';

// The public keys item: every verifier, the JWKS route and the signers read it.

/** The public keys item as read: its keys, and when it was written (what a conditional write expects to find). */
export interface PublishedItem {
  keys: PublicKey[];
  updatedAt: string;
}

export const readPublishedItem = async (database: Db, consistent = false): Promise<PublishedItem | null> => {
  const { data } = await database.entities.signingKeys.get(SIGNING_KEYS_ITEM).go({ consistent });
  return data ? { keys: data.keys as PublicKey[], updatedAt: data.updatedAt } : null;
};

export const readPublishedKeys = async (database: Db, consistent = false): Promise<PublicKey[] | null> =>
  (await readPublishedItem(database, consistent))?.keys ?? null;

/** A conditional publishKeys found the item changed since the caller read it: nothing was written. */
export class PublishedKeysChanged extends Error {
  constructor() {
    super('the public keys item changed since it was read (a rotation or a revocation wrote it): nothing was written');
    this.name = 'PublishedKeysChanged';
  }
}

/**
 * Writes the item as given (a whole replacement); a key without publishedAt is stamped `now`.
 * With `expected` (the item as the caller read it, null if there was none), only if the item is
 * still exactly that: a concurrent rotation or revocation is then never overwritten (it throws
 * PublishedKeysChanged, and the caller reads again).
 */
export const publishKeys = async (database: Db, keys: readonly PublicKey[], now: Date, expected?: PublishedItem | null): Promise<void> => {
  const stamped = keys.map((k) => ({ ...k, publishedAt: k.publishedAt ?? now.toISOString() }));
  const put = database.entities.signingKeys.put({ ...SIGNING_KEYS_ITEM, keys: stamped, updatedAt: now.toISOString() });
  if (expected === undefined) {
    await put.go();
    return;
  }
  try {
    await put
      .where(({ updatedAt, keys: current }, { eq, notExists }) =>
        expected === null ? notExists(updatedAt) : `${eq(updatedAt, expected.updatedAt)} AND ${eq(current, expected.keys)}`,
      )
      .go();
  } catch (error) {
    if (isConditionFailure(error)) throw new PublishedKeysChanged();
    throw error;
  }
};

/** How often updatePublishedKeys reads again after a concurrent write, before it gives up. */
const PUBLISH_TRIES = 3;

/**
 * Replaces the item with `change(keys as read)`, only if nobody wrote it in between (a rotation
 * step and a revocation may race): on a concurrent write it reads again and re-applies `change`.
 */
export const updatePublishedKeys = async (
  database: Db,
  now: Date,
  change: (published: PublicKey[]) => PublicKey[] | Promise<PublicKey[]>,
): Promise<void> => {
  for (let tries = 1; ; tries++) {
    const item = await readPublishedItem(database, true);
    try {
      await publishKeys(database, await change(item?.keys ?? []), now, item);
      return;
    } catch (error) {
      if (!(error instanceof PublishedKeysChanged) || tries === PUBLISH_TRIES) throw error;
    }
  }
};
