import { type CryptoKey, type JWK, importJWK } from 'jose';
import { SIGNING_KEYS_ITEM } from '#lib/db/entities/keys.ts';
import { type Db, db as sharedDb } from '#lib/db/service.ts';
import { KeyCache, isLocal, unavailable } from './cache.ts';
import {
  ALGORITHMS,
  JWKS_CACHE_MS,
  KID,
  type PublicKey,
  RELOAD_MIN_INTERVAL_MS,
  jwksOf,
  publicMembers,
  publicPartOf,
  stillVerifies,
} from './model.ts';
import { readPublishedKeys } from './table-store.ts';

// Verifying access tokens: the public keys of the table item, cached per process. What every
// authenticated function bundles; the private keys, the local key file and its bootstrap are not here.

interface Verifiers {
  keys: PublicKey[];
  imported: Map<string, Promise<CryptoKey>>;
}

/**
 * The keys to verify with, from the item as read. Deployed, no item is an outage (503), never "no
 * keys". Locally none are published until the first signer makes them (local.ts), and then forgets
 * this process's caches: until then no token can be ours.
 */
const verifiersOf = (keys: PublicKey[] | null): Verifiers => {
  if (!keys && !isLocal()) throw new Error('no public signing keys are published');
  return { keys: keys ?? [], imported: new Map() };
};

const verifiers = new KeyCache<Verifiers>(async () => verifiersOf(await readPublishedKeys(sharedDb())));

/** Whether this process has the public keys in memory (verifying then costs no read). */
export const keysInMemory = (): boolean => verifiers.holds();

/** The public keys item, for readAsActor to read with the request's own items when keysInMemory() is false. */
export const publishedKeysRead = (database: Db) => [database.entities.signingKeys, SIGNING_KEYS_ITEM] as const;

/** Keeps the keys read by readAsActor as this process's public keys, as a load of its own would (503 if none deployed). */
export const adoptPublishedKeys = (keys: PublicKey[] | null): void => {
  try {
    verifiers.set(verifiersOf(keys));
  } catch (error) {
    unavailable(error);
  }
};

const findKey = (set: Verifiers, kid: string, alg: string, now: Date): PublicKey | undefined =>
  set.keys.find((k) => k.kid === kid && k.alg === alg && ALGORITHMS.includes(k.alg) && stillVerifies(k, now));

/**
 * The public key of ours named `kid`, for `alg`, if verifiers accept it now; undefined otherwise.
 * An unknown kid reloads the published keys once (at most every RELOAD_MIN_INTERVAL_MS): it may
 * be a key published since this process loaded them.
 */
export const verificationKey = async (kid: unknown, alg: unknown, now = new Date()): Promise<CryptoKey | undefined> => {
  if (typeof kid !== 'string' || !KID.test(kid) || typeof alg !== 'string') return undefined;
  let set = await verifiers.get().catch(unavailable);
  let found = findKey(set, kid, alg, now);
  if (!found && !set.keys.some((k) => k.kid === kid)) {
    set = await verifiers.get(RELOAD_MIN_INTERVAL_MS).catch(unavailable);
    found = findKey(set, kid, alg, now);
  }
  if (!found) return undefined;
  const id = `${found.kid}.${publicPartOf(found)}`;
  let imported = set.imported.get(id);
  if (!imported) {
    imported = importJWK(publicMembers(found), found.alg) as Promise<CryptoKey>;
    set.imported.set(id, imported);
  }
  return imported;
};

/** The JWK Set other verifiers fetch: the published item, at most JWKS_CACHE_MS old. */
export const publishedJwks = async (now = new Date()): Promise<{ keys: JWK[] }> =>
  jwksOf((await verifiers.get(JWKS_CACHE_MS).catch(unavailable)).keys, now);
