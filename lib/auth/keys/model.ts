import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { type JWK, calculateJwkThumbprint } from 'jose';
import * as z from 'zod/mini';
import { config } from '#lib/core/config.ts';

/**
 * The access-token signing keys (docs/keys.md). A keyset is a list of keys; signingKeyOf says
 * which one signs (the newest published long enough, not retired), and verifiers accept every key
 * not retired longer ago than a token lives. Private halves: a Secrets Manager secret deployed
 * (read only by the functions that sign), a 0600 file in DATA_DIR locally. Public halves: one
 * DynamoDB item, which every verifier, the JWKS route and the signers read. A key signs only once
 * it is published, and no key is ever taken from the token itself.
 */

/**
 * The algorithms a key may have. RS256 signs by default: API Gateway's JWT authorizers (HTTP APIs
 * take RSA only) and most JWT libraries verify it (docs/protect-your-api.md).
 */
export const ALGORITHM_PARAMS = {
  RS256: { kty: 'RSA' },
  EdDSA: { kty: 'OKP', crv: 'Ed25519' },
  ES256: { kty: 'EC', crv: 'P-256' },
} as const;
export type Algorithm = keyof typeof ALGORITHM_PARAMS;

/** RSA modulus length of new RS256 keys: 2048 bits, the size API Gateway and NIST SP 800-57 take through 2030. */
export const RSA_MODULUS_BITS = 2048;

/**
 * `TOKEN_ALGORITHMS` (comma-separated; RS256 then EdDSA by default): the first signs new keys, all
 * verify. EdDSA stays in the default so that a deployment which signed EdDSA before RS256 became
 * the default keeps verifying those tokens while they live (docs/keys.md, "Algorithms").
 */
export const algorithmsFrom = (raw: string | undefined): Algorithm[] => {
  const names = (raw?.trim() ? raw.split(',') : ['RS256', 'EdDSA']).map((name) => name.trim());
  for (const name of names)
    if (!Object.hasOwn(ALGORITHM_PARAMS, name)) throw new Error(`TOKEN_ALGORITHMS: ${name} is not RS256, EdDSA or ES256`);
  return names as Algorithm[];
};
export const ALGORITHMS: readonly Algorithm[] = algorithmsFrom(config.tokenAlgorithms);

/** Clock tolerance of token checks, and of the key acceptance window. */
export const LEEWAY_SECONDS = 30;
/** How long a process keeps the keys it loaded (private and public alike). */
export const CACHE_MAX_AGE_MS = 5 * 60_000;
/**
 * A token with a kid we do not know reloads the public keys, at most this often per process: one
 * eventually consistent GetItem a second is all a flood of made-up kids can cost, and a key
 * published a moment before its first token is found within a second.
 */
export const RELOAD_MIN_INTERVAL_MS = 1000;
/**
 * How stale the JWKS route may serve the keys: a verifier elsewhere that meets an unknown kid
 * refetches the document, and must find a key published a moment ago (functions/jwks.ts).
 */
export const JWKS_CACHE_MS = 10_000;
/** Cache-Control max-age of the JWKS document, in seconds. */
export const JWKS_MAX_AGE_SECONDS = 60;
/**
 * How long a key must have been published before it signs, while an older key can still sign: a
 * JWKS document read just before the key was published may be served by the route's cache for
 * JWKS_CACHE_MS and then kept by HTTP caches for JWKS_MAX_AGE_SECONDS. A verifier elsewhere behind
 * such a cache refuses the new kid until then. signingKeyOf applies this.
 */
export const PUBLICATION_LEAD_MS = JWKS_MAX_AGE_SECONDS * 1000 + JWKS_CACHE_MS;
/**
 * A key's retirement is recorded as retiredAt = (when the rotation finishes) + this: until the new
 * key has been published PUBLICATION_LEAD_MS, signers may choose the old one, and they keep their
 * choice for CACHE_MAX_AGE_MS (signingKeyOf never chooses a key due to retire sooner than that).
 * 10 minutes: those 6 min 10 s and a margin.
 */
export const RETIREMENT_GRACE_MS = 10 * 60_000;

export const KID = /^[A-Za-z0-9_-]{1,64}$/;
const ISO = z.string().check(z.refine((s) => !Number.isNaN(Date.parse(s)), { error: 'must be a timestamp' }));
const CurveJwk = z.object({ kty: z.enum(['OKP', 'EC']), crv: z.string(), x: z.string(), y: z.optional(z.string()), d: z.string() });
const RsaJwk = z.object({
  kty: z.literal('RSA'),
  n: z.string(),
  e: z.string(),
  d: z.string(),
  p: z.string(),
  q: z.string(),
  dp: z.string(),
  dq: z.string(),
  qi: z.string(),
});
const PrivateKeyEntry = z.object({
  kid: z.string().check(z.regex(KID)),
  alg: z.enum(['RS256', 'EdDSA', 'ES256']),
  /** Curve keys only. */
  crv: z.optional(z.enum(['Ed25519', 'P-256'])),
  createdAt: ISO,
  retiredAt: z.optional(ISO),
  privateJwk: z.union([CurveJwk, RsaJwk]),
});
/** A key that seals second-factor secrets (lib/auth/factor-seal.ts): 32 random bytes, base64url. */
const SealKeyEntry = z.object({
  kid: z.string().check(z.regex(KID)),
  key: z.string().check(z.regex(/^[A-Za-z0-9_-]{43}$/)),
  createdAt: ISO,
});
/** Unknown members (the `bootstrap` filler of the secret CloudFormation creates) are dropped. */
const KeysetSchema = z.object({ keys: z.array(PrivateKeyEntry), sealKeys: z.optional(z.array(SealKeyEntry)) });

export type PrivateKey = z.infer<typeof PrivateKeyEntry>;
export type SealKey = z.infer<typeof SealKeyEntry>;
/**
 * The secret's content. `sealKeys` ride in the same secret (no second secret to pay for): every
 * rotation carries them over, adds one when the newest is older than SEAL_KEY_MAX_AGE_DAYS, and
 * never drops one, since a factor sealed under it would be lost (docs/mfa.md, "Sealing keys").
 */
export interface Keyset {
  keys: PrivateKey[];
  sealKeys?: SealKey[] | undefined;
}

/** A new sealing key joins the keyset at the first rotation after the newest is this old. */
export const SEAL_KEY_MAX_AGE_DAYS = 365;

const newSealKey = (now: Date): SealKey => ({
  kid: `seal-${now.toISOString().slice(0, 10)}-${randomBytes(4).toString('hex')}`,
  key: randomBytes(32).toString('base64url'),
  createdAt: now.toISOString(),
});

/** The sealing keys after a rotation at `now`: all kept, and a new one if none is younger than SEAL_KEY_MAX_AGE_DAYS. */
export const withFreshSealKey = (sealKeys: readonly SealKey[] | undefined, now: Date): SealKey[] => {
  const newest = newestKeyOf(sealKeys ?? []);
  const fresh = newest !== undefined && now.getTime() - Date.parse(newest.createdAt) < SEAL_KEY_MAX_AGE_DAYS * 86_400_000;
  return fresh ? [...(sealKeys ?? [])] : [...(sealKeys ?? []), newSealKey(now)];
};
/** What the table item holds per key: the public JWK members and the key's dates. */
export interface PublicKey {
  kid: string;
  alg: Algorithm;
  kty: 'OKP' | 'EC' | 'RSA';
  /** OKP and EC keys: the curve and its point (y for EC only). */
  crv?: 'Ed25519' | 'P-256' | undefined;
  x?: string | undefined;
  y?: string | undefined;
  /** RSA keys: modulus and exponent. */
  n?: string | undefined;
  e?: string | undefined;
  createdAt: string;
  /** When the key was first written to the item (absent on items written before this was recorded: createdAt then). */
  publishedAt?: string;
  retiredAt?: string;
}

export const parseKeyset = (text: string): Keyset => KeysetSchema.parse(JSON.parse(text));

// The key model, pure: the stores are table-store.ts (public) and file-store.ts (local private keys).

/** The public members of a key's JWK (no private member), by key type. */
export const publicMembers = (jwk: {
  kty: string;
  crv?: string | undefined;
  x?: string | undefined;
  y?: string | undefined;
  n?: string | undefined;
  e?: string | undefined;
}): JWK =>
  jwk.kty === 'RSA' ? { kty: 'RSA', n: jwk.n, e: jwk.e } : { kty: jwk.kty, crv: jwk.crv, x: jwk.x, ...(jwk.y ? { y: jwk.y } : {}) };

/** What tells two keys with one kid apart: the curve point or the modulus. */
export const publicPartOf = (jwk: { x?: string | undefined; n?: string | undefined }): string | undefined => jwk.n ?? jwk.x;

const keyPair = (alg: Algorithm) =>
  alg === 'RS256'
    ? generateKeyPairSync('rsa', { modulusLength: RSA_MODULUS_BITS })
    : alg === 'EdDSA'
      ? generateKeyPairSync('ed25519')
      : generateKeyPairSync('ec', { namedCurve: 'P-256' });

export const newKey = async (alg: Algorithm, now: Date): Promise<PrivateKey> => {
  const jwk = keyPair(alg).privateKey.export({ format: 'jwk' }) as PrivateKey['privateJwk'];
  // RFC 7638 thumbprint of the public key: a kid that names the key and nothing else.
  const kid = await calculateJwkThumbprint(publicMembers(jwk));
  const params = ALGORITHM_PARAMS[alg];
  return { kid, alg, ...('crv' in params ? { crv: params.crv } : {}), createdAt: now.toISOString(), privateJwk: jwk };
};

/** Tokens signed by a key live at most this long after it stopped signing. */
const acceptedSince = (now: Date): number => now.getTime() - (config.accessTokenSeconds + LEEWAY_SECONDS) * 1000;

/** Whether tokens of this key may still be valid: it signs, or stopped no longer ago than a token lives. */
export const stillVerifies = (key: { retiredAt?: string | undefined }, now: Date): boolean =>
  key.retiredAt === undefined || Date.parse(key.retiredAt) > acceptedSince(now);

/** The earlier of two optional timestamps. */
const earliest = (a: string | undefined, b: string | undefined): string | undefined =>
  a === undefined ? b : b === undefined || Date.parse(a) <= Date.parse(b) ? a : b;

const publishedAtOf = (key: PublicKey): string => key.publishedAt ?? key.createdAt;

/** The item's entry for a private key: same kid, same public key, same algorithm. */
const entryOf = (key: PrivateKey, published: readonly PublicKey[]): PublicKey | undefined =>
  published.find((p) => p.kid === key.kid && publicPartOf(p) === publicPartOf(key.privateJwk) && p.alg === key.alg);

/** A key the signing rule may choose: its dates as the item and the keyset record them. */
interface SigningCandidate<T> {
  key: T;
  createdAt: string;
  publishedAt: string;
  retiredAt: string | undefined;
}

/** The choice of the signing rule among published keys of an algorithm we use (signingKeyOf says which). */
const chooseSigner = <T>(candidates: readonly SigningCandidate<T>[], now: Date): T | undefined => {
  const able = candidates
    .filter((c) => c.retiredAt === undefined || Date.parse(c.retiredAt) - now.getTime() >= CACHE_MAX_AGE_MS)
    .reverse() // equal createdAt: the later in the list counts as newer
    .sort((a, b) => b.createdAt.localeCompare(a.createdAt));
  const ready = able.find((c) => now.getTime() - Date.parse(c.publishedAt) >= PUBLICATION_LEAD_MS);
  return (ready ?? able.at(-1))?.key;
};

/**
 * THE signing rule (docs/keys.md, "Signing"), for the keyset and the published item a signer
 * loaded at `now`. A key can sign if it is of an algorithm we use, published (in the item), and
 * not retired, nor due to retire within CACHE_MAX_AGE_MS (the signer keeps its choice that long;
 * the earlier retiredAt of the keyset and the item counts). Of those, the newest one published at
 * least PUBLICATION_LEAD_MS ago signs. A key published more recently signs only if no key
 * published earlier can sign (the very first key, or the old one revoked): then the oldest such key.
 */
export const signingKeyOf = (keyset: Keyset, published: readonly PublicKey[], now: Date): PrivateKey | undefined =>
  chooseSigner(
    keyset.keys.flatMap((key) => {
      const entry = entryOf(key, published);
      if (!entry || !ALGORITHMS.includes(key.alg)) return [];
      return [{ key, createdAt: key.createdAt, publishedAt: publishedAtOf(entry), retiredAt: earliest(key.retiredAt, entry.retiredAt) }];
    }),
    now,
  );

/**
 * The same rule on the item alone, as if the keyset held every key of it: what a process without
 * the private keys (an operator's command) can tell of the key that signs. Deployed, the item may
 * also hold the key of an unfinished or abandoned rotation, which no signer has yet.
 */
export const publishedSignerOf = (published: readonly PublicKey[], now: Date): PublicKey | undefined =>
  chooseSigner(
    published
      .filter((p) => ALGORITHMS.includes(p.alg))
      .map((p) => ({ key: p, createdAt: p.createdAt, publishedAt: publishedAtOf(p), retiredAt: p.retiredAt })),
    now,
  );

/** The newest key (the one the last rotation added); on equal createdAt the later one. */
export const newestKeyOf = <T extends { createdAt: string }>(keys: readonly T[]): T | undefined =>
  keys.reduce<T | undefined>((newest, k) => (!newest || k.createdAt >= newest.createdAt ? k : newest), undefined);

/**
 * Records the retirement of the keys named: retiredAt = now + RETIREMENT_GRACE_MS on each that has
 * none yet. A retirement already recorded is kept, so doing this again changes nothing.
 */
export const retireKeys = <T extends { kid: string; retiredAt?: string | undefined }>(
  keys: readonly T[],
  kids: ReadonlySet<string>,
  now: Date,
): T[] => {
  const retiredAt = new Date(now.getTime() + RETIREMENT_GRACE_MS).toISOString();
  return keys.map((k) => (kids.has(k.kid) && k.retiredAt === undefined ? { ...k, retiredAt } : k));
};

/**
 * The keyset with the retirements the item records (deployed, finishSecret records them in the
 * item; createSecret copies them into the next keyset): each key's retiredAt is the earlier of the two.
 */
export const withPublishedRetirements = (keyset: Keyset, published: readonly PublicKey[]): Keyset => ({
  ...keyset,
  keys: keyset.keys.map((key) => {
    const retiredAt = earliest(key.retiredAt, entryOf(key, published)?.retiredAt);
    return retiredAt === undefined ? key : { ...key, retiredAt };
  }),
});

/**
 * The first half of a rotation: drops the keys whose tokens have all expired and adds a new key
 * (and a sealing key when due: withFreshSealKey). It retires nothing: the key signing now goes on signing until its retirement is recorded.
 */
export const addKey = async (keyset: Keyset, now: Date, alg: Algorithm = ALGORITHMS[0] ?? 'RS256'): Promise<Keyset> => ({
  keys: [...keyset.keys.filter((k) => stillVerifies(k, now)), await newKey(alg, now)],
  sealKeys: withFreshSealKey(keyset.sealKeys, now),
});

/**
 * A whole rotation in one step (`keys:rotate`): addKey, then every other key retired at
 * now + RETIREMENT_GRACE_MS. The new key signs once it has been published PUBLICATION_LEAD_MS.
 */
export const rotateKeyset = async (keyset: Keyset, now: Date, alg: Algorithm = ALGORITHMS[0] ?? 'RS256'): Promise<Keyset> => {
  const next = await addKey(keyset, now, alg);
  const older = new Set(next.keys.slice(0, -1).map((k) => k.kid));
  return { ...next, keys: retireKeys(next.keys, older, now) };
};

/** The public halves of a keyset (never a private member), without publication dates. */
export const publicKeysOf = (keyset: Keyset): PublicKey[] =>
  keyset.keys.map(({ kid, alg, createdAt, retiredAt, privateJwk }) => ({
    kid,
    alg,
    ...(publicMembers(privateJwk) as Pick<PublicKey, 'kty' | 'crv' | 'x' | 'y' | 'n' | 'e'>),
    createdAt,
    ...(retiredAt ? { retiredAt } : {}),
  }));

/**
 * What to write to the item for these keys, given what it holds now: each key keeps the
 * publishedAt the item has for it and gets the earlier retiredAt of the two, so rewriting the item
 * neither restarts a key's publication lead nor undoes a retirement. Keys new to the item have no
 * publishedAt (publishKeys stamps it). Keys only the item holds are not carried over.
 */
export const mergePublished = (keys: readonly PublicKey[], published: readonly PublicKey[]): PublicKey[] =>
  keys.map((key) => {
    const entry = published.find((p) => p.kid === key.kid && publicPartOf(p) === publicPartOf(key));
    if (!entry) return key;
    const retiredAt = earliest(key.retiredAt, entry.retiredAt);
    return { ...key, publishedAt: publishedAtOf(entry), ...(retiredAt ? { retiredAt } : {}) };
  });

/** The public JWK of a key: these members and no others, so no private member can slip out. */
const publicJwk = (key: PublicKey): JWK => ({ ...publicMembers(key), kid: key.kid, alg: key.alg, use: 'sig' });

/** The JWK Set for GET /.well-known/jwks.json: exactly the keys verifiers accept now, newest first. */
export const jwksOf = (keys: readonly PublicKey[], now: Date): { keys: JWK[] } => ({
  keys: keys
    .filter((k) => stillVerifies(k, now) && ALGORITHMS.includes(k.alg))
    .sort((a, b) => b.createdAt.localeCompare(a.createdAt))
    .map(publicJwk),
});
