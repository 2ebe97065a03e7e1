import { config } from '#lib/core/config.ts';
import type { Db } from '#lib/db/service.ts';
import { ALGORITHMS, LEEWAY_SECONDS, type PublicKey, mergePublished, publishedSignerOf, stillVerifies } from './keys/model.ts';
import { PublishedKeysChanged, publishKeys, readPublishedItem } from './keys/table-store.ts';

/**
 * Revoking a signing key at once (`npm run keys:revoke`, docs/keys.md "Revoking a leaked key"):
 * its retiredAt in the public keys item goes back to just beyond the acceptance window, so
 * verifiers refuse its tokens and signers stop choosing it as soon as they reload the item (within
 * CACHE_MAX_AGE_MS). Every rewrite of the item keeps the earlier retiredAt (mergePublished,
 * withPublishedRetirements), so no rotation undoes it; the next one drops the key.
 */

/** A token lifetime, the leeway and a second ago: stillVerifies is false from the moment it is written. */
export const revokedRetiredAt = (now: Date): string =>
  new Date(now.getTime() - (config.accessTokenSeconds + LEEWAY_SECONDS + 1) * 1000).toISOString();

export type Revocation =
  /** `keys` is the item to write; `signer` the key the signing rule picks from it. */
  | { outcome: 'revoked'; key: PublicKey; keys: PublicKey[]; signer: PublicKey }
  | { outcome: 'already-revoked'; key: PublicKey }
  | { outcome: 'unknown' }
  /** Revoking it would leave no key to sign: every sign-in and refresh would answer 503. */
  | { outcome: 'only-signer'; key: PublicKey };

/**
 * The revocation of `kid` in the item `published`, decided on the item alone (deployed, the
 * operator does not read the secret). A key without a recorded retirement is the one that signs,
 * or will once its rotation finishes (finishSecret records the older keys' retirement only after
 * AWSCURRENT moved; keys:rotate in the same write that adds the new key): it is never revoked.
 * A retired key may be, if another key of an algorithm we use is unretired: the newest key of
 * AWSCURRENT always is, so signers still find one.
 */
export const planRevocation = (published: readonly PublicKey[], kid: string, now: Date): Revocation => {
  const key = published.find((k) => k.kid === kid);
  if (!key) return { outcome: 'unknown' };
  if (!stillVerifies(key, now)) return { outcome: 'already-revoked', key };
  const revoked = { ...key, retiredAt: revokedRetiredAt(now) };
  // mergePublished keeps every key's publishedAt as the item has it (a legacy key's: its createdAt).
  const keys = mergePublished(
    published.map((k) => (k.kid === kid ? revoked : k)),
    published,
  );
  const successor = keys.some((k) => k.kid !== kid && k.retiredAt === undefined && ALGORITHMS.includes(k.alg));
  const signer = publishedSignerOf(keys, now); // defined whenever there is a successor
  if (key.retiredAt === undefined || !successor || !signer) return { outcome: 'only-signer', key };
  return { outcome: 'revoked', key: revoked, keys, signer };
};

/** Attempts before giving up when the item keeps changing under us (a rotation writes it at most a few times). */
const ATTEMPTS = 3;

/**
 * Reads the item, decides (planRevocation), and writes it only if nothing wrote it since the read:
 * a concurrent rotation's write is never lost; the revocation then reads again and decides on the
 * new item. Writes nothing unless the outcome is 'revoked'. Processes (this one too) learn of it
 * when their key caches expire, within CACHE_MAX_AGE_MS.
 */
export const revokeKey = async (database: Db, kid: string, now: Date): Promise<Revocation> => {
  for (let attempt = 1; ; attempt++) {
    const item = await readPublishedItem(database, true);
    const plan = planRevocation(item?.keys ?? [], kid, now);
    if (plan.outcome !== 'revoked') return plan;
    try {
      await publishKeys(database, plan.keys, now, item);
      return plan;
    } catch (error) {
      if (!(error instanceof PublishedKeysChanged) || attempt === ATTEMPTS) throw error;
    }
  }
};
