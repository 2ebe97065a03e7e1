import type { Db } from '#lib/db/service.ts';
import { forgetCachedKeys } from './cache.ts';
import { placeKeysetFile, readKeysetFile } from './file-store.ts';
import {
  ALGORITHMS,
  type Keyset,
  mergePublished,
  newKey,
  publicKeysOf,
  publicPartOf,
  rotateKeyset,
  withFreshSealKey,
  withPublishedRetirements,
} from './model.ts';
import { publishKeys, readPublishedItem, readPublishedKeys } from './table-store.ts';

// Local mode only (DynamoDB Local, no secret): the keys are made here, on first use. Deployed functions never import this.

/**
 * The local keyset (verifiers never make it: a process signs before any token of ours exists): DATA_DIR/signing-keys.json, made with one key on first use, and its public keys
 * published (added to the item) before this process signs with any of them.
 */
export const localKeyset = async (database: Db, dir: string, now: Date): Promise<Keyset> => {
  let keyset = await readKeysetFile(dir);
  if (!keyset) {
    await placeKeysetFile(
      dir,
      { keys: [await newKey(ALGORITHMS[0] ?? 'RS256', now)], sealKeys: withFreshSealKey(undefined, now) },
      'create',
    );
    keyset = (await readKeysetFile(dir)) as Keyset;
  }
  if (!keyset.sealKeys?.length) {
    // A data directory from before sealing keys: one is added (local mode runs one server process).
    keyset = { ...keyset, sealKeys: withFreshSealKey(undefined, now) };
    await placeKeysetFile(dir, keyset, 'replace');
  }
  const published = (await readPublishedKeys(database, true)) ?? [];
  const missing = publicKeysOf(keyset).filter((k) => !published.some((p) => p.kid === k.kid && publicPartOf(p) === publicPartOf(k)));
  if (missing.length > 0) {
    // Added, not replaced: a racing process's key stays published until the next rotation.
    await publishKeys(database, [...published.filter((p) => !missing.some((m) => m.kid === p.kid)), ...missing], now);
    // Verifiers of this process may hold the item as it was (none published yet): let them read it again.
    forgetCachedKeys();
  }
  return keyset;
};

/**
 * `npm run keys:rotate`, one step: rotateKeyset (with the retirements the item records, so a
 * revoked key leaves the file too), the public keys published first (the new key, and the old ones
 * retired at now + RETIREMENT_GRACE_MS), then the file replaced. The item is written only if
 * nothing else wrote it since it was read (else PublishedKeysChanged, nothing replaced). Signers
 * take the new key once it has been published PUBLICATION_LEAD_MS (signingKeyOf).
 */
export const rotateLocalKeys = async (database: Db, dir: string, now: Date): Promise<Keyset> => {
  const keyset = await localKeyset(database, dir, now);
  const item = await readPublishedItem(database, true);
  const published = item?.keys ?? [];
  const next = await rotateKeyset(withPublishedRetirements(keyset, published), now);
  await publishKeys(database, mergePublished(publicKeysOf(next), published), now, item);
  await placeKeysetFile(dir, next, 'replace');
  forgetCachedKeys(); // this process knows at once; others within CACHE_MAX_AGE_MS
  return next;
};
