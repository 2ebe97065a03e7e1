/**
 * The signing keys (lib/auth/keys/) for real: key generation, rotation, pruning, the
 * acceptance window, the caches, the local keyset on DynamoDB Local, and the deployed rotation
 * function's four steps, with a test double for the Secrets Manager API only (the service cannot
 * run here). SECURITY-TESTS G9, G10, K5.
 */
import {
  DescribeSecretCommand,
  GetSecretValueCommand,
  PutSecretValueCommand,
  type SecretsManagerClient,
  UpdateSecretVersionStageCommand,
} from '@aws-sdk/client-secrets-manager';
import { GetCommand, type GetCommandInput } from '@aws-sdk/lib-dynamodb';
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SignJWT, calculateJwkThumbprint, decodeProtectedHeader, importJWK, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { PENDING_MAX_AGE_MS, rotationStep } from '#lib/auth/key-rotation.ts';
import { ensureTable } from '#infra/dynamodb-local.ts';
import { KeyCache, forgetCachedKeys } from '#lib/auth/keys/cache.ts';
import { readKeysetFile } from '#lib/auth/keys/file-store.ts';
import { localKeyset, rotateLocalKeys } from '#lib/auth/keys/local.ts';
import {
  CACHE_MAX_AGE_MS,
  type Keyset,
  JWKS_CACHE_MS,
  JWKS_MAX_AGE_SECONDS,
  LEEWAY_SECONDS,
  PUBLICATION_LEAD_MS,
  type PrivateKey,
  type PublicKey,
  RELOAD_MIN_INTERVAL_MS,
  RETIREMENT_GRACE_MS,
  addKey,
  algorithmsFrom,
  jwksOf,
  mergePublished,
  newKey,
  newestKeyOf,
  parseKeyset,
  publicKeysOf,
  retireKeys,
  rotateKeyset,
  signingKeyOf,
  stillVerifies,
  withPublishedRetirements,
  RSA_MODULUS_BITS,
  publicMembers,
} from '#lib/auth/keys/model.ts';
import { publishKeys, readPublishedKeys } from '#lib/auth/keys/table-store.ts';
import { verificationKey } from '#lib/auth/keys/verification.ts';
import { currentSigningKey } from '#lib/auth/signing.ts';
import { config } from '#lib/core/config.ts';
import { createDocumentClient } from '#lib/db/client.ts';
import { signingKeysPartitionKey } from '#lib/db/entities/keys.ts';
import { KEYS } from '#lib/db/entities/table.ts';
import { type Db, createDb, db } from '#lib/db/service.ts';

const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k'];
const LIFETIME_MS = (config.accessTokenSeconds + LEEWAY_SECONDS) * 1000;
const at = (iso: string): Date => new Date(iso);
const later = (date: Date, ms: number): Date => new Date(date.getTime() + ms);
const T0 = at('2026-03-01T12:00:00.000Z');

/** A table of its own on this file's DynamoDB Local, for tests that must not see each other's item. */
const freshDb = async (): Promise<Db> => {
  const table = `keys-${randomUUID()}`;
  await ensureTable(process.env.DYNAMODB_ENDPOINT as string, table);
  return createDb(createDocumentClient(), table);
};
const freshDir = (): string => mkdtempSync(join(tmpdir(), 'roster-keys-'));

/** The raw item as DynamoDB stores it, to prove what is (not) in it. */
const rawItemText = async (database: Db): Promise<string> => {
  const params = database.entities.signingKeys.get({ purpose: 'access-token' }).params<GetCommandInput>();
  const { Item } = await createDocumentClient().send(new GetCommand({ ...params, ConsistentRead: true }));
  return JSON.stringify(Item);
};

describe('keys', () => {
  it('are Ed25519 with an RFC 7638 thumbprint as kid', async () => {
    const key = await newKey('EdDSA', T0);
    expect(key).toMatchObject({ alg: 'EdDSA', crv: 'Ed25519', createdAt: T0.toISOString() });
    expect(key.privateJwk).toMatchObject({ kty: 'OKP', crv: 'Ed25519' });
    expect(Buffer.from(key.privateJwk.d, 'base64url')).toHaveLength(32);
    const { kty, crv, x } = key.privateJwk as { kty: string; crv: string; x: string };
    expect(key.kid).toBe(await calculateJwkThumbprint({ kty, crv, x }));
    expect(key.kid).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect((await newKey('EdDSA', T0)).kid).not.toBe(key.kid);
  });

  it('can be P-256 (ES256) when configured, and sign and verify as such', async () => {
    const key = await newKey('ES256', T0);
    expect(key.privateJwk).toMatchObject({ kty: 'EC', crv: 'P-256' });
    const [pub] = publicKeysOf({ keys: [key] });
    const token = await new SignJWT({ a: 1 })
      .setProtectedHeader({ alg: 'ES256', kid: key.kid })
      .sign(await importJWK(key.privateJwk, 'ES256'));
    const { kty, crv, x, y } = pub as NonNullable<typeof pub>;
    await expect(jwtVerify(token, await importJWK({ kty, crv, x, y }, 'ES256'), { algorithms: ['ES256'] })).resolves.toBeDefined();
  });

  it('are RSA 2048 (RS256) by default, with an RFC 7638 thumbprint as kid, and sign and verify as such', async () => {
    const key = await newKey('RS256', T0);
    expect(key).toMatchObject({ alg: 'RS256', createdAt: T0.toISOString() });
    expect(key).not.toHaveProperty('crv');
    const { kty, n, e } = key.privateJwk as { kty: string; n: string; e: string };
    expect(kty).toBe('RSA');
    expect(Buffer.from(n, 'base64url')).toHaveLength(RSA_MODULUS_BITS / 8);
    expect(key.kid).toBe(await calculateJwkThumbprint({ kty, n, e }));
    const [pub] = publicKeysOf({ keys: [key] });
    // The public half only: modulus and exponent, no private member.
    expect(Object.keys(pub as object).sort()).toEqual(['alg', 'createdAt', 'e', 'kid', 'kty', 'n']);
    const token = await new SignJWT({ a: 1 })
      .setProtectedHeader({ alg: 'RS256', kid: key.kid })
      .sign(await importJWK(key.privateJwk, 'RS256'));
    await expect(jwtVerify(token, await importJWK({ kty, n, e }, 'RS256'), { algorithms: ['RS256'] })).resolves.toBeDefined();
    expect(jwksOf([pub as PublicKey], T0).keys).toEqual([{ kty: 'RSA', n, e, kid: key.kid, alg: 'RS256', use: 'sig' }]);
  });

  it('are configured from TOKEN_ALGORITHMS: RS256 signs and EdDSA verifies by default, ES256 allowed, nothing symmetric or unsigned', () => {
    expect(algorithmsFrom(undefined)).toEqual(['RS256', 'EdDSA']);
    expect(algorithmsFrom(' ')).toEqual(['RS256', 'EdDSA']);
    expect(algorithmsFrom('EdDSA, ES256')).toEqual(['EdDSA', 'ES256']);
    for (const bad of ['HS256', 'none', 'RS512', 'PS256', 'EdDSA,HS512', 'eddsa', 'rs256'])
      expect(() => algorithmsFrom(bad), bad).toThrow(/TOKEN_ALGORITHMS/);
  });

  it('verify until a token lifetime plus leeway after retirement, and not a millisecond longer', () => {
    const retiredAt = T0.toISOString();
    expect(stillVerifies({}, later(T0, 10 * 365 * 86_400_000))).toBe(true);
    expect(stillVerifies({ retiredAt }, later(T0, LIFETIME_MS - 1))).toBe(true);
    expect(stillVerifies({ retiredAt }, later(T0, LIFETIME_MS))).toBe(false);
  });
});

/** The item for a keyset as if every key had been published at `publishedAt` (long ago unless told). */
const publishedAs = (keyset: Keyset, publishedAt = at('2000-01-01T00:00:00.000Z')): PublicKey[] =>
  publicKeysOf(keyset).map((k) => ({ ...k, publishedAt: publishedAt.toISOString() }));
/** The signing key of a keyset whose keys were all published long ago. */
const signerOf = (keyset: Keyset, now = T0): PrivateKey | undefined => signingKeyOf(keyset, publishedAs(keyset), now);

describe('rotation of a keyset', () => {
  it('starts from nothing with one signing key', async () => {
    const keyset = await rotateKeyset({ keys: [] }, T0);
    expect(keyset.keys).toHaveLength(1);
    expect(signerOf(keyset)).toBe(keyset.keys[0]);
  });

  it('in one step (keys:rotate): adds a key that signs and retires the old one, which keeps signing in warm processes for the grace time', async () => {
    const first = await rotateKeyset({ keys: [] }, T0);
    const t1 = later(T0, 30 * 86_400_000);
    const second = await rotateKeyset(first, t1);
    const [old, added] = second.keys as [PrivateKey, PrivateKey];
    expect(old.kid).toBe(first.keys[0]?.kid);
    expect(old.retiredAt).toBe(later(t1, RETIREMENT_GRACE_MS).toISOString());
    expect(signerOf(second, t1)).toBe(added);
    expect(added.createdAt).toBe(t1.toISOString());
    // The old key still verifies for a full token lifetime after it stops signing.
    expect(stillVerifies(old, later(t1, RETIREMENT_GRACE_MS + LIFETIME_MS - 1))).toBe(true);
  });

  it('in two halves (deployed): addKey adds a key and retires nothing; retireKeys records a retirement once', async () => {
    const first = await rotateKeyset({ keys: [] }, T0);
    const t1 = later(T0, 1000);
    const next = await addKey(first, t1);
    const [old, added] = next.keys as [PrivateKey, PrivateKey];
    expect(old).toEqual(first.keys[0]);
    expect(old.retiredAt).toBeUndefined();
    expect(added.createdAt).toBe(t1.toISOString());
    expect(newestKeyOf(next.keys)).toBe(added);
    // The old key is still a signing key: nothing stops it however long the rest takes.
    expect(signingKeyOf({ keys: [old] }, publishedAs(next), later(t1, 365 * 86_400_000))).toBe(old);
    const t2 = later(t1, 3 * 3_600_000);
    const retired = retireKeys(next.keys, new Set([old.kid]), t2);
    expect(retired[0]?.retiredAt).toBe(later(t2, RETIREMENT_GRACE_MS).toISOString());
    expect(retired[1]).toBe(added);
    // Again, later: the retirement already recorded stands.
    expect(retireKeys(retired, new Set([old.kid]), later(t2, 86_400_000))).toEqual(retired);
  });

  it('prunes a key at the next rotation once its tokens have all expired, not before', async () => {
    const first = await rotateKeyset({ keys: [] }, T0);
    const t1 = later(T0, 1000);
    const second = await rotateKeyset(first, t1);
    const retiredAt = Date.parse(second.keys[0]?.retiredAt as string);
    const soon = await rotateKeyset(second, new Date(retiredAt + LIFETIME_MS - 1));
    expect(soon.keys.map((k) => k.kid)).toContain(first.keys[0]?.kid);
    const afterwards = await rotateKeyset(second, new Date(retiredAt + LIFETIME_MS));
    expect(afterwards.keys.map((k) => k.kid)).not.toContain(first.keys[0]?.kid);
    expect(afterwards.keys).toHaveLength(2);
    // The same for addKey, with the retirement the item records.
    const recorded = withPublishedRetirements(await addKey(first, t1), publishedAs(second));
    expect((await addKey(recorded, new Date(retiredAt + LIFETIME_MS))).keys.map((k) => k.kid)).not.toContain(first.keys[0]?.kid);
  });

  it('signs with the newest published key that is not retired, and never with a retired or unpublished one', async () => {
    const a = await newKey('EdDSA', T0);
    const b = await newKey('EdDSA', later(T0, 1000));
    const now = later(T0, 86_400_000);
    expect(signerOf({ keys: [b, a] }, now)).toBe(b);
    expect(signerOf({ keys: [a, { ...b, retiredAt: T0.toISOString() }] }, now)).toBe(a);
    expect(signerOf({ keys: [{ ...a, retiredAt: T0.toISOString() }] }, now)).toBeUndefined();
    expect(signerOf({ keys: [] }, now)).toBeUndefined();
    // Retired in the item only (as the deployed rotation records it): the same.
    const both = { keys: [a, b] };
    const itemRetired = publishedAs(both).map((k) => (k.kid === b.kid ? { ...k, retiredAt: T0.toISOString() } : k));
    expect(signingKeyOf(both, itemRetired, now)).toBe(a);
    // A key the item does not hold (or holds with another public key) never signs.
    expect(signingKeyOf(both, publishedAs({ keys: [a] }), now)).toBe(a);
    expect(
      signingKeyOf(
        both,
        publishedAs(both).map((k) => (k.kid === b.kid ? { ...k, x: (a.privateJwk as { x: string }).x } : k)),
        now,
      ),
    ).toBe(a);
    expect(signingKeyOf(both, [], now)).toBeUndefined();
    // A key due to retire within a signer's cache age is not chosen: the signer would keep it past its retirement.
    const soon = { ...b, retiredAt: later(now, CACHE_MAX_AGE_MS - 1).toISOString() };
    expect(signerOf({ keys: [a, soon] }, now)).toBe(a);
    expect(signerOf({ keys: [a, { ...b, retiredAt: later(now, CACHE_MAX_AGE_MS).toISOString() }] }, now)?.kid).toBe(b.kid);
  });

  it(`signs with a new key only once it has been published ${PUBLICATION_LEAD_MS / 1000} s (JWKS max-age plus its server cache), unless no older key can sign`, async () => {
    expect(PUBLICATION_LEAD_MS).toBe(JWKS_MAX_AGE_SECONDS * 1000 + JWKS_CACHE_MS);
    // A signer may keep choosing the old key until the new one is ripe, and then for its cache age: the grace covers both.
    expect(RETIREMENT_GRACE_MS).toBeGreaterThanOrEqual(CACHE_MAX_AGE_MS + PUBLICATION_LEAD_MS + 60_000);
    const old = await newKey('EdDSA', T0);
    const t1 = later(T0, 86_400_000);
    const fresh = await newKey('EdDSA', t1);
    const keyset = { keys: [old, fresh] };
    const published = [...publishedAs({ keys: [old] }), ...publishedAs({ keys: [fresh] }, t1)];
    expect(signingKeyOf(keyset, published, t1)).toBe(old);
    expect(signingKeyOf(keyset, published, later(t1, PUBLICATION_LEAD_MS - 1))).toBe(old);
    expect(signingKeyOf(keyset, published, later(t1, PUBLICATION_LEAD_MS))).toBe(fresh);
    // The old key retired in one step (keys:rotate) still signs until the new one is ripe.
    const retiring = { keys: [{ ...old, retiredAt: later(t1, RETIREMENT_GRACE_MS).toISOString() }, fresh] };
    expect(signingKeyOf(retiring, published, later(t1, PUBLICATION_LEAD_MS - 1))?.kid).toBe(old.kid);
    expect(signingKeyOf(retiring, published, later(t1, PUBLICATION_LEAD_MS))).toBe(fresh);
    // No older key that can sign: the fresh one signs at once (the very first key, or the old one gone).
    expect(signingKeyOf({ keys: [fresh] }, published, t1)).toBe(fresh);
    expect(signingKeyOf({ keys: [{ ...old, retiredAt: T0.toISOString() }, fresh] }, published, t1)).toBe(fresh);
    // Two fresh keys and none ripe: the one published first.
    const fresher = await newKey('EdDSA', later(t1, 5000));
    const three = [...publishedAs({ keys: [fresh] }, t1), ...publishedAs({ keys: [fresher] }, later(t1, 5000))];
    expect(signingKeyOf({ keys: [fresh, fresher] }, three, later(t1, 10_000))).toBe(fresh);
    // An item written before publishedAt was recorded: a key counts as published when it was created.
    const legacy = publicKeysOf(keyset);
    expect(signingKeyOf(keyset, legacy, later(t1, PUBLICATION_LEAD_MS - 1))).toBe(old);
    expect(signingKeyOf(keyset, legacy, later(t1, PUBLICATION_LEAD_MS))).toBe(fresh);
  });

  it("rewrites the item keeping each key's publication date and the earlier retirement, dropping keys only the item holds", async () => {
    const [a, b, c] = [await newKey('EdDSA', T0), await newKey('EdDSA', later(T0, 1)), await newKey('EdDSA', later(T0, 2))];
    const item: PublicKey[] = [
      { ...publishedAs({ keys: [a] }, T0)[0], retiredAt: later(T0, 5000).toISOString() } as PublicKey,
      ...publishedAs({ keys: [c] }, T0),
    ];
    const merged = mergePublished(publicKeysOf({ keys: [{ ...a, retiredAt: later(T0, 9000).toISOString() }, b] }), item);
    expect(merged.map((k) => k.kid)).toEqual([a.kid, b.kid]);
    expect(merged[0]).toMatchObject({ publishedAt: T0.toISOString(), retiredAt: later(T0, 5000).toISOString() });
    expect(merged[1]).not.toHaveProperty('publishedAt');
    // The private side retired earlier: that wins (a retirement is never undone).
    const earlier = mergePublished(publicKeysOf({ keys: [{ ...a, retiredAt: T0.toISOString() }] }), item);
    expect(earlier[0]?.retiredAt).toBe(T0.toISOString());
  });

  it('publishes public members only, and the JWKS holds exactly the keys that still verify, newest first', async () => {
    const first = await rotateKeyset({ keys: [] }, T0);
    const second = await rotateKeyset(first, later(T0, 1000));
    const published = publicKeysOf(second);
    for (const key of published) for (const member of PRIVATE_MEMBERS) expect(key).not.toHaveProperty(member);
    const jwks = jwksOf(published, later(T0, 2000));
    expect(jwks.keys.map((k) => k.kid)).toEqual([second.keys[1]?.kid, second.keys[0]?.kid]);
    for (const key of jwks.keys) {
      expect(Object.keys(key).sort()).toEqual(['alg', 'e', 'kid', 'kty', 'n', 'use']);
      expect(key).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig' });
    }
    const expiredAt = new Date(Date.parse(second.keys[0]?.retiredAt as string) + LIFETIME_MS);
    expect(jwksOf(published, expiredAt).keys.map((k) => k.kid)).toEqual([second.keys[1]?.kid]);
  });

  it('reads the secret CloudFormation creates as an empty keyset, and refuses anything malformed', async () => {
    expect(parseKeyset(JSON.stringify({ keys: [], bootstrap: 'Xy12' }))).toEqual({ keys: [] });
    const good = await rotateKeyset({ keys: [] }, T0);
    expect(parseKeyset(JSON.stringify(good))).toEqual(good);
    const key = good.keys[0] as PrivateKey;
    const bad: unknown[] = [
      'not json',
      {},
      { keys: [{ ...key, kid: '../../etc/passwd' }] },
      { keys: [{ ...key, alg: 'HS256' }] },
      { keys: [{ ...key, privateJwk: { ...key.privateJwk, d: undefined } }] },
      { keys: [{ ...key, createdAt: 'yesterday' }] },
    ];
    for (const value of bad) expect(() => parseKeyset(typeof value === 'string' ? value : JSON.stringify(value))).toThrow();
  });
});

describe('KeyCache', () => {
  const counting = () => {
    let now = 0;
    let loads = 0;
    let fail = false;
    const cache = new KeyCache(
      async () => {
        loads++;
        if (fail) throw new Error('store down');
        return loads;
      },
      () => now,
    );
    return {
      cache,
      loads: () => loads,
      tick: (ms: number) => (now += ms),
      failing: (value: boolean) => (fail = value),
    };
  };

  it('keeps a value for its maximum age, then reloads; concurrent callers share one load', async () => {
    const c = counting();
    expect(await Promise.all([c.cache.get(), c.cache.get(), c.cache.get()])).toEqual([1, 1, 1]);
    c.tick(CACHE_MAX_AGE_MS - 1);
    expect(await c.cache.get()).toBe(1);
    c.tick(1);
    expect(await c.cache.get()).toBe(2);
    expect(c.loads()).toBe(2);
  });

  it('reloads for an unknown kid at most once per interval, however many ask', async () => {
    const c = counting();
    await c.cache.get();
    for (let i = 0; i < 100; i++) await c.cache.get(RELOAD_MIN_INTERVAL_MS);
    expect(c.loads()).toBe(1);
    c.tick(RELOAD_MIN_INTERVAL_MS);
    for (let i = 0; i < 100; i++) await c.cache.get(RELOAD_MIN_INTERVAL_MS);
    expect(c.loads()).toBe(2);
  });

  it('does not keep a failed load: the next call tries again, and no stale or made-up value is served', async () => {
    const c = counting();
    c.failing(true);
    await expect(c.cache.get()).rejects.toThrow('store down');
    await expect(c.cache.get()).rejects.toThrow('store down');
    c.failing(false);
    expect(await c.cache.get()).toBe(3);
  });
});

describe('local keyset (DATA_DIR and DynamoDB Local)', () => {
  it('is made on first use: a 0600 file, its public keys published to the table, no private member there', async () => {
    const database = await freshDb();
    const dir = freshDir();
    expect(await readPublishedKeys(database)).toBeNull();
    const keyset = await localKeyset(database, dir, T0);
    expect(keyset.keys).toHaveLength(1);
    expect(statSync(join(dir, 'signing-keys.json')).mode & 0o777).toBe(0o600);
    expect(await readKeysetFile(dir)).toEqual(keyset);
    expect(await readPublishedKeys(database, true)).toEqual(publishedAs(keyset, T0));
    const raw = await rawItemText(database);
    expect(raw).toContain(keyset.keys[0]?.kid);
    // The partition the rotation function's IAM policy is scoped to (infra/background.ts) is the one ElectroDB writes.
    expect(JSON.parse(raw)).toMatchObject({ [KEYS.pk]: signingKeysPartitionKey() });
    expect(raw).not.toContain(keyset.keys[0]?.privateJwk.d);
    expect(JSON.parse(raw)).not.toHaveProperty('keys.0.d');
    // The second use reads the same keys and writes nothing new.
    expect(await localKeyset(database, dir, later(T0, 1000))).toEqual(keyset);
  });

  it('makes one keyset when many processes start at once, and every key in it is published', async () => {
    const database = await freshDb();
    const dir = freshDir();
    const sets = await Promise.all(Array.from({ length: 8 }, () => localKeyset(database, dir, T0)));
    const kids = new Set(sets.map((s) => s.keys[0]?.kid));
    expect(kids.size).toBe(1);
    const published = (await readPublishedKeys(database, true)) ?? [];
    expect(published.map((k) => k.kid)).toContain([...kids][0]);
  });

  it('rotates: the new key is published, then signs; the old one stays published and retired', async () => {
    const database = await freshDb();
    const dir = freshDir();
    const before = await localKeyset(database, dir, T0);
    const after = await rotateLocalKeys(database, dir, later(T0, 1000));
    const [old, added] = after.keys as [PrivateKey, PrivateKey];
    expect(old.kid).toBe(before.keys[0]?.kid);
    expect(old.retiredAt).toBe(later(T0, 1000 + RETIREMENT_GRACE_MS).toISOString());
    expect(await readKeysetFile(dir)).toEqual(after);
    expect(statSync(join(dir, 'signing-keys.json')).mode & 0o777).toBe(0o600);
    const published = (await readPublishedKeys(database, true)) ?? [];
    expect(published.map((k) => k.kid)).toEqual([old.kid, added.kid]);
    // The old key keeps its publication date; the new one is published now, and signs once ripe.
    expect(published.map((k) => k.publishedAt)).toEqual([T0.toISOString(), later(T0, 1000).toISOString()]);
    expect(published[0]?.retiredAt).toBe(old.retiredAt);
    expect(signingKeyOf(after, published, later(T0, 1000))?.kid).toBe(old.kid);
    expect(signingKeyOf(after, published, later(T0, 1000 + PUBLICATION_LEAD_MS))).toBe(added);
  });

  it('finds a key published after this process loaded the keys, by reloading on its unknown kid', async () => {
    forgetCachedKeys();
    const { kid } = await currentSigningKey();
    expect(await verificationKey(kid, 'RS256')).toBeDefined();
    // Another process publishes a key (the first step of its rotation).
    const extra = await newKey('RS256', new Date());
    await publishKeys(db(), [...((await readPublishedKeys(db(), true)) ?? []), ...publicKeysOf({ keys: [extra] })], new Date());
    await new Promise((resolve) => setTimeout(resolve, RELOAD_MIN_INTERVAL_MS + 100));
    expect(await verificationKey(extra.kid, 'RS256')).toBeDefined();
    // Our kid under another algorithm, and kids that are not even well formed, find nothing.
    expect(await verificationKey(kid, 'ES256')).toBeUndefined();
    for (const bad of ['../../etc/passwd', "' OR 1=1 --", 'x'.repeat(10_000), '', 42, null, undefined]) {
      expect(await verificationKey(bad, 'RS256')).toBeUndefined();
    }
  });
});

describe('deployed stores fail closed (503, no key made up)', () => {
  const keysModule = fileURLToPath(new URL('../../lib/auth/keys/verification.ts', import.meta.url));
  const signingModule = fileURLToPath(new URL('../../lib/auth/signing.ts', import.meta.url));
  /** Runs `call` on lib/auth/keys/verification.ts and signing.ts in a process configured like a deployed function. */
  const deployed = (env: Record<string, string>, call: string) => {
    const script = `const keys = { ...(await import(${JSON.stringify(keysModule)})), ...(await import(${JSON.stringify(signingModule)})) };
      try { await ${call}; console.log(JSON.stringify({ ok: true })); }
      catch (error) { console.log(JSON.stringify({ code: error.code, status: error.status })); }`;
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 30_000,
      env: { PATH: process.env.PATH, AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'local', AWS_SECRET_ACCESS_KEY: 'local', ...env },
    });
    return { result: JSON.parse(run.stdout.trim().split('\n').at(-1) ?? '{}') as Record<string, unknown>, stderr: run.stderr };
  };

  it('a verifier whose table has no keys item answers unavailable and writes no key', async () => {
    const table = `keys-${randomUUID()}`;
    await ensureTable(process.env.DYNAMODB_ENDPOINT as string, table);
    const dir = freshDir();
    // The regional endpoint deployed is DynamoDB Local here, but without DYNAMODB_ENDPOINT: not local mode.
    const { result, stderr } = deployed(
      { AWS_ENDPOINT_URL: process.env.DYNAMODB_ENDPOINT as string, TABLE_NAME: table, DATA_DIR: dir },
      "keys.verificationKey('k1', 'EdDSA')",
    );
    expect(result).toEqual({ code: 'unavailable', status: 503 });
    expect(stderr).toMatch(/signing keys unavailable.*no public signing keys/);
    expect(existsSync(join(dir, 'signing-keys.json'))).toBe(false);
    expect(await readPublishedKeys(createDb(createDocumentClient(), table), true)).toBeNull();
  });

  it('a signer whose secret cannot be read answers unavailable', () => {
    const { result, stderr } = deployed(
      { AWS_ENDPOINT_URL: 'http://127.0.0.1:9', SIGNING_KEY_SECRET_ARN: 'arn:aws:secretsmanager:us-east-1:000000000000:secret:k-AbCdEf' },
      'keys.currentSigningKey()',
    );
    expect(result).toEqual({ code: 'unavailable', status: 503 });
    expect(stderr).toMatch(/signing keys unavailable/);
  });

  it('a function without the secret cannot sign, even with a data directory', () => {
    const dir = freshDir();
    const { result } = deployed({ AWS_ENDPOINT_URL: 'http://127.0.0.1:9', DATA_DIR: dir }, 'keys.currentSigningKey()');
    expect(result).toEqual({ code: 'unavailable', status: 503 });
    expect(existsSync(join(dir, 'signing-keys.json'))).toBe(false);
  });
});

// ---------------------------------------------------------------------------------------------

/**
 * The Secrets Manager API as the rotation function uses it, and nothing more: versions with
 * staging labels (a version's value never changes), RotateSecret's empty AWSPENDING version (refused
 * while another version holds AWSPENDING), and the end of a rotation.
 */
class SecretsDouble {
  readonly id = 'arn:aws:secretsmanager:us-east-1:000000000000:secret:roster-signing-AbCdEf';
  rotationEnabled = true;
  puts = 0;
  readonly versions = new Map<string, { value?: string; stages: string[] }>([
    // As CloudFormation creates the secret (infra/data-stack.ts): an empty keyset with a filler.
    ['v0', { value: JSON.stringify({ keys: [], bootstrap: 'Qz81mKf0' }), stages: ['AWSCURRENT'] }],
  ]);

  private move(stage: string, to: string | undefined): void {
    for (const [id, v] of this.versions) if (id !== to) v.stages = v.stages.filter((s) => s !== stage);
    if (to) this.versions.get(to)?.stages.push(stage);
  }

  private notFound(): Error {
    return Object.assign(new Error("Secrets Manager can't find the specified secret value"), { name: 'ResourceNotFoundException' });
  }

  readonly client = {
    send: async (command: object): Promise<unknown> => {
      if (command instanceof DescribeSecretCommand) {
        return {
          RotationEnabled: this.rotationEnabled,
          VersionIdsToStages: Object.fromEntries([...this.versions].map(([id, v]) => [id, [...v.stages]])),
        };
      }
      if (command instanceof GetSecretValueCommand) {
        const { VersionId, VersionStage = VersionId ? undefined : 'AWSCURRENT' } = command.input;
        const found = [...this.versions].find(
          ([id, v]) => (!VersionId || id === VersionId) && (!VersionStage || v.stages.includes(VersionStage)),
        );
        if (!found?.[1].value) throw this.notFound();
        return { VersionId: found[0], SecretString: found[1].value };
      }
      if (command instanceof PutSecretValueCommand) {
        const { ClientRequestToken: id = '', SecretString, VersionStages = [] } = command.input;
        const existing = this.versions.get(id);
        if (existing?.value !== undefined && existing.value !== SecretString) {
          throw Object.assign(new Error('a version with this token already exists'), { name: 'ResourceExistsException' });
        }
        this.puts++;
        this.versions.set(id, { value: SecretString as string, stages: existing?.stages ?? [] });
        for (const stage of VersionStages) this.move(stage, id);
        return {};
      }
      if (command instanceof UpdateSecretVersionStageCommand) {
        const { VersionStage = '', MoveToVersionId, RemoveFromVersionId } = command.input;
        const from = this.versions.get(RemoveFromVersionId ?? '');
        if (VersionStage === 'AWSPENDING' && !MoveToVersionId && from?.stages.includes('AWSPENDING')) {
          this.move('AWSPENDING', undefined);
          return {};
        }
        if (VersionStage !== 'AWSCURRENT' || !from?.stages.includes('AWSCURRENT')) throw new Error('unexpected stage update');
        this.move('AWSPREVIOUS', RemoveFromVersionId);
        this.move('AWSCURRENT', MoveToVersionId);
        return {};
      }
      throw new Error(`the rotation function must not call ${command.constructor.name}`);
    },
  } as unknown as SecretsManagerClient;

  /** RotateSecret: a new version, labelled AWSPENDING, without a value yet. */
  startRotation(token: string): void {
    const busy = [...this.versions.values()].some((v) => v.stages.includes('AWSPENDING') && !v.stages.includes('AWSCURRENT'));
    if (busy) throw new Error("A previous rotation isn't complete. That rotation will be reattempted.");
    this.versions.set(token, { stages: [] });
    this.move('AWSPENDING', token);
  }

  /** After finishSecret succeeds, Secrets Manager ends the rotation. */
  endRotation(): void {
    this.move('AWSPENDING', undefined);
  }

  keyset(stage = 'AWSCURRENT'): Keyset {
    const version = [...this.versions.values()].find((v) => v.stages.includes(stage));
    return parseKeyset(version?.value ?? '');
  }
}

const STEPS = ['createSecret', 'setSecret', 'testSecret', 'finishSecret'] as const;

const stepper = (sm: SecretsDouble, database: Db, token: string) => (Step: string, now: Date) =>
  rotationStep(sm.client, database, { Step, SecretId: sm.id, ClientRequestToken: token }, now);

const rotate = async (sm: SecretsDouble, database: Db, now: Date, token = randomUUID()): Promise<string> => {
  sm.startRotation(token);
  for (const Step of STEPS) await stepper(sm, database, token)(Step, now);
  sm.endRotation();
  return token;
};

/** A first key made at T0, then a second rotation started a day later: the steps are `run`'s to take. */
const rotationUnderWay = async () => {
  const sm = new SecretsDouble();
  const database = await freshDb();
  await rotate(sm, database, T0);
  const [first] = sm.keyset().keys as [PrivateKey];
  const t1 = later(T0, 86_400_000);
  const token = randomUUID();
  sm.startRotation(token);
  return { sm, database, first, t1, token, run: stepper(sm, database, token) };
};

const item = async (database: Db): Promise<PublicKey[]> => (await readPublishedKeys(database, true)) ?? [];

/** A token as signAccessToken makes it: signed at `now` by the key a signer loading now chooses, living a token lifetime. */
const signAt = async (keyset: Keyset, database: Db, now: Date): Promise<{ kid: string; token: string; exp: Date }> => {
  const key = signingKeyOf(keyset, await item(database), now);
  if (!key) throw new Error('no key can sign');
  const exp = later(now, config.accessTokenSeconds * 1000);
  const token = await new SignJWT({ sub: 'u' })
    .setProtectedHeader({ alg: key.alg, kid: key.kid })
    .setExpirationTime(Math.floor(exp.getTime() / 1000))
    .sign(await importJWK(key.privateJwk, key.alg));
  return { kid: key.kid, token, exp };
};

/** Verifies like verificationKey: only a published key of the token's kid that verifies at `now`. */
const verifyAt = async (token: string, database: Db, now: Date): Promise<void> => {
  const { kid } = decodeProtectedHeader(token);
  const match = (await item(database)).find((p) => p.kid === kid && stillVerifies(p, now));
  if (!match) throw new Error(`key ${String(kid)} is not accepted at ${now.toISOString()}`);
  await jwtVerify(token, await importJWK(publicMembers(match), match.alg), { algorithms: [match.alg], currentDate: now });
};

/** A token signed now verifies now and until just before it expires. */
const roundTrip = async (keyset: Keyset, database: Db, now: Date): Promise<string> => {
  const { token, exp, kid } = await signAt(keyset, database, now);
  await verifyAt(token, database, now);
  await verifyAt(token, database, later(exp, -1000));
  return kid;
};

describe('rotation steps (lib/auth/key-rotation.ts) against DynamoDB Local', () => {
  it('makes a sealing key with the first key, carries it over, and refuses a pending keyset that lost one (testSecret)', async () => {
    const { sm, t1, token, run } = await rotationUnderWay();
    const [seal] = sm.keyset().sealKeys ?? [];
    expect(seal?.key).toMatch(/^[\w-]{43}$/);
    await run('createSecret', t1);
    expect(sm.keyset('AWSPENDING').sealKeys).toEqual([seal]);
    // A pending keyset written without them (an older build, a hand-made version) never becomes current.
    const version = sm.versions.get(token) as { value?: string };
    version.value = JSON.stringify({ keys: sm.keyset('AWSPENDING').keys });
    await run('setSecret', t1);
    await expect(run('testSecret', t1)).rejects.toThrow(/lacks sealing keys/);
  });

  it('makes the first key from the empty secret CloudFormation creates, and publishes it', async () => {
    const sm = new SecretsDouble();
    const database = await freshDb();
    await rotate(sm, database, T0);
    const keyset = sm.keyset();
    expect(keyset.keys).toHaveLength(1);
    expect(await item(database)).toEqual(publishedAs(keyset, T0));
    // The very first key signs at once: there is no older one.
    expect(await roundTrip(keyset, database, T0)).toBe(keyset.keys[0]?.kid);
    expect(await rawItemText(database)).not.toContain(keyset.keys[0]?.privateJwk.d);
  });

  it('publishes the new key with the old one unretired, makes it current, then retires the old key from the finish', async () => {
    const sm = new SecretsDouble();
    const database = await freshDb();
    await rotate(sm, database, T0);
    const [first] = sm.keyset().keys as [PrivateKey];
    const t1 = later(T0, 30 * 86_400_000);
    const token = randomUUID();
    sm.startRotation(token);
    const run = stepper(sm, database, token);
    await run('createSecret', t1);
    // The pending keyset retires nothing.
    const pending = sm.keyset('AWSPENDING');
    expect(pending.keys.map((k) => k.retiredAt)).toEqual([undefined, undefined]);
    const next = newestKeyOf(pending.keys) as PrivateKey;
    const t2 = later(t1, 2000);
    await run('setSecret', t2);
    // Published, the old key unretired, and not yet signing anywhere: AWSCURRENT still holds the first key alone.
    expect(await item(database)).toEqual([...publishedAs({ keys: [first] }, T0), ...publishedAs({ keys: [next] }, t2)]);
    expect(signingKeyOf(sm.keyset(), await item(database), t2)?.kid).toBe(first.kid);
    await run('testSecret', t2);
    // The finish comes much later than the start (a slow or retried rotation): the retirement counts from the finish.
    const t3 = later(t1, 3 * 3_600_000);
    await run('finishSecret', t3);
    sm.endRotation();
    const current = sm.keyset();
    expect(current.keys.map((k) => k.kid)).toEqual([first.kid, next.kid]);
    const published = await item(database);
    expect(published.map((k) => [k.kid, k.publishedAt, k.retiredAt])).toEqual([
      [first.kid, T0.toISOString(), later(t3, RETIREMENT_GRACE_MS).toISOString()],
      [next.kid, t2.toISOString(), undefined],
    ]);
    // The new key signs once published PUBLICATION_LEAD_MS (here long since); tokens of the old key signed until its retirement still verify until they expire.
    expect(await roundTrip(current, database, t3)).toBe(next.kid);
    expect(await roundTrip({ keys: [first] }, database, later(t3, RETIREMENT_GRACE_MS - CACHE_MAX_AGE_MS))).toBe(first.kid);
  });

  it('does not let a new key sign until it has been published for the JWKS cache time, however fast the steps run', async () => {
    const sm = new SecretsDouble();
    const database = await freshDb();
    await rotate(sm, database, T0);
    const [first] = sm.keyset().keys as [PrivateKey];
    const t1 = later(T0, 86_400_000);
    await rotate(sm, database, t1); // all four steps at once
    const current = sm.keyset();
    const next = newestKeyOf(current.keys) as PrivateKey;
    expect(await roundTrip(current, database, t1)).toBe(first.kid);
    expect(await roundTrip(current, database, later(t1, PUBLICATION_LEAD_MS - 1))).toBe(first.kid);
    expect(await roundTrip(current, database, later(t1, PUBLICATION_LEAD_MS))).toBe(next.kid);
  });

  for (const [stall, ms] of [
    ['3 seconds', 3000],
    ['6 minutes', 6 * 60_000],
    ['3 hours', 3 * 3_600_000],
    ['3 days', 3 * 86_400_000],
  ] as const) {
    it(`accepts every token a signer issues, up to its expiry, when finishSecret comes ${stall} after createSecret`, async () => {
      const sm = new SecretsDouble();
      const database = await freshDb();
      await rotate(sm, database, T0);
      const t1 = later(T0, 30 * 86_400_000);
      const token = randomUUID();
      sm.startRotation(token);
      const run = stepper(sm, database, token);
      /** What a signer loading at a time sees: AWSCURRENT and the item, as they were then. */
      const states: { at: Date; keyset: Keyset; published: PublicKey[] }[] = [
        { at: T0, keyset: sm.keyset(), published: await item(database) },
      ];
      const snap = async (time: Date) => states.push({ at: time, keyset: sm.keyset(), published: await item(database) });
      await run('createSecret', t1);
      await run('setSecret', later(t1, 1000));
      await snap(later(t1, 1000));
      await run('testSecret', later(t1, 2000));
      const finish = later(t1, ms);
      await run('finishSecret', finish);
      sm.endRotation();
      await snap(finish);
      const final = await item(database);
      // A signer loading at `load` keeps its choice for CACHE_MAX_AGE_MS; its last token expires a lifetime later.
      for (let load = later(t1, -60_000); load <= later(finish, 20 * 60_000); load = later(load, ms > 3_600_000 ? 600_000 : 15_000)) {
        const state = states.filter((s) => s.at <= load).at(-1) as (typeof states)[number];
        const key = signingKeyOf(state.keyset, state.published, load);
        expect(key, load.toISOString()).toBeDefined();
        const lastExpiry = later(load, CACHE_MAX_AGE_MS + config.accessTokenSeconds * 1000);
        // The item only ever gets stricter (retirement recorded at the finish): the final one is the test.
        const entry = final.find((p) => p.kid === key?.kid);
        expect(entry && stillVerifies(entry, lastExpiry), `${key?.kid} chosen at ${load.toISOString()}`).toBe(true);
        // A new key signs only once published long enough for every JWKS cache to hold it.
        const old = state.keyset.keys.find((k) => k.kid !== key?.kid);
        if (key && old && key.createdAt > old.createdAt) {
          expect(load.getTime() - Date.parse(entry?.publishedAt ?? '')).toBeGreaterThanOrEqual(PUBLICATION_LEAD_MS);
        }
      }
    });
  }

  it('leaves the old key signing while a rotation stalls, abandons a pending keyset over an hour old, and rotates afresh', async () => {
    const { sm, database, first, t1, run } = await rotationUnderWay();
    await run('createSecret', t1);
    await run('setSecret', t1);
    const abandoned = newestKeyOf(sm.keyset('AWSPENDING').keys) as PrivateKey;
    // testSecret and finishSecret never succeed. Hours later the first key still signs, and its tokens verify to the end.
    const t2 = later(t1, PENDING_MAX_AGE_MS + 1);
    expect(await roundTrip(sm.keyset(), database, t2)).toBe(first.kid);
    // A new RotateSecret is refused while AWSPENDING sits on the stalled version; Secrets Manager reattempts it instead.
    expect(() => sm.startRotation(randomUUID())).toThrow(/previous rotation/);
    await expect(run('createSecret', t2)).rejects.toThrow(/over 60 minutes ago.*AWSPENDING label is removed/);
    expect(Object.values(Object.fromEntries([...sm.versions].map(([id, v]) => [id, v.stages]))).flat()).not.toContain('AWSPENDING');
    await expect(run('setSecret', t2)).rejects.toThrow(/not AWSPENDING/);
    expect(sm.puts).toBe(2);
    // The next rotation starts afresh, from the keys as they are now.
    await rotate(sm, database, t2);
    const current = sm.keyset();
    const next = newestKeyOf(current.keys) as PrivateKey;
    expect(current.keys.map((k) => k.kid)).toEqual([first.kid, next.kid]);
    expect(next.createdAt).toBe(t2.toISOString());
    // The abandoned key never signed; it leaves the item. The first key retires from this finish.
    const published = await item(database);
    expect(published.map((k) => k.kid)).toEqual([first.kid, next.kid]);
    expect(published[0]?.retiredAt).toBe(later(t2, RETIREMENT_GRACE_MS).toISOString());
    expect(published.map((k) => k.kid)).not.toContain(abandoned.kid);
  });

  it('reuses a pending keyset up to an hour old', async () => {
    const sm = new SecretsDouble();
    const database = await freshDb();
    await rotate(sm, database, T0);
    const token = randomUUID();
    sm.startRotation(token);
    const run = stepper(sm, database, token);
    await run('createSecret', T0);
    const pending = sm.keyset('AWSPENDING');
    await run('createSecret', later(T0, PENDING_MAX_AGE_MS));
    expect(sm.keyset('AWSPENDING')).toEqual(pending);
    expect(sm.puts).toBe(2);
  });

  it('is safe to retry: every step twice, and every step again once the version is current, gives what running each once does', async () => {
    const sm = new SecretsDouble();
    const database = await freshDb();
    await rotate(sm, database, T0);
    const t1 = later(T0, 86_400_000);
    const token = randomUUID();
    sm.startRotation(token);
    const run = stepper(sm, database, token);
    await run('createSecret', t1);
    const pending = sm.keyset('AWSPENDING');
    await run('createSecret', later(t1, 5000));
    expect(sm.keyset('AWSPENDING')).toEqual(pending);
    expect(sm.puts).toBe(2);
    await run('setSecret', t1);
    const published = await item(database);
    await run('setSecret', later(t1, 60_000));
    expect(await item(database)).toEqual(published); // the publication date stands: the lead does not restart
    await run('testSecret', t1);
    await run('testSecret', t1);
    const t2 = later(t1, 120_000);
    await run('finishSecret', t2);
    const finished = await item(database);
    await run('finishSecret', later(t2, 3_600_000)); // retried after it moved AWSCURRENT
    expect(await item(database)).toEqual(finished);
    sm.endRotation();
    for (const Step of STEPS) await run(Step, later(t2, 86_400_000));
    expect(await item(database)).toEqual(finished);
    expect(sm.keyset()).toEqual(pending);
    expect(sm.puts).toBe(2);
  });

  it('records the retirement when finishSecret is retried after moving AWSCURRENT but before writing the item', async () => {
    const { sm, database, first, t1, token, run } = await rotationUnderWay();
    for (const Step of ['createSecret', 'setSecret', 'testSecret']) await run(Step, t1);
    // The first attempt moved the label and then failed.
    const from = [...sm.versions].find(([, v]) => v.stages.includes('AWSCURRENT'))?.[0];
    await sm.client.send(
      new UpdateSecretVersionStageCommand({
        SecretId: sm.id,
        VersionStage: 'AWSCURRENT',
        MoveToVersionId: token,
        RemoveFromVersionId: from,
      }),
    );
    expect((await item(database)).find((k) => k.kid === first.kid)?.retiredAt).toBeUndefined();
    const t2 = later(t1, 600_000);
    await run('finishSecret', t2);
    expect((await item(database)).find((k) => k.kid === first.kid)?.retiredAt).toBe(later(t2, RETIREMENT_GRACE_MS).toISOString());
  });

  it('fails testSecret, and so never finishes, when the new key is not published', async () => {
    const sm = new SecretsDouble();
    const database = await freshDb();
    await rotate(sm, database, T0);
    const token = randomUUID();
    sm.startRotation(token);
    const run = stepper(sm, database, token);
    await run('createSecret', T0);
    await expect(run('testSecret', T0)).rejects.toThrow(/not published/);
    expect(sm.keyset().keys).toHaveLength(1);
  });

  it('fails testSecret when the pending keyset would drop a key whose tokens may be valid, and setSecret keeps that key published', async () => {
    const sm = new SecretsDouble();
    const database = await freshDb();
    await rotate(sm, database, T0);
    const [first] = sm.keyset().keys as [PrivateKey];
    const token = randomUUID();
    sm.startRotation(token);
    // A pending keyset not made from AWSCURRENT (written by hand, say): the first key is missing.
    const stray = { keys: [await newKey('EdDSA', T0)] };
    await sm.client.send(
      new PutSecretValueCommand({
        SecretId: sm.id,
        ClientRequestToken: token,
        SecretString: JSON.stringify(stray),
        VersionStages: ['AWSPENDING'],
      }),
    );
    const run = stepper(sm, database, token);
    await run('setSecret', T0);
    expect((await item(database)).map((k) => k.kid)).toEqual([first.kid, stray.keys[0]?.kid]);
    await expect(run('testSecret', T0)).rejects.toThrow(new RegExp(`lacks keys.*${first.kid}`));
  });

  it('refuses a secret without rotation, a token without a version, and one not pending', async () => {
    const sm = new SecretsDouble();
    const database = await freshDb();
    const event = (ClientRequestToken: string) => ({ Step: 'createSecret', SecretId: sm.id, ClientRequestToken });
    await expect(rotationStep(sm.client, database, event('nope'), T0)).rejects.toThrow(/no stage/);
    sm.versions.set('stray', { value: '{"keys":[]}', stages: [] });
    await expect(rotationStep(sm.client, database, event('stray'), T0)).rejects.toThrow(/not AWSPENDING/);
    sm.rotationEnabled = false;
    sm.startRotation('t');
    await expect(rotationStep(sm.client, database, event('t'), T0)).rejects.toThrow(/not enabled/);
    await expect(rotationStep(sm.client, database, { ...event('t'), Step: 'dropTable' }, T0)).rejects.toThrow();
  });

  it('prunes keys whose tokens have all expired from the secret and the published item', async () => {
    const sm = new SecretsDouble();
    const database = await freshDb();
    await rotate(sm, database, T0);
    const first = sm.keyset().keys[0] as PrivateKey;
    const t1 = later(T0, 1000);
    await rotate(sm, database, t1);
    // The first key retired at t1 (the second finish) + grace; its tokens are all expired a lifetime after.
    const t2 = later(t1, RETIREMENT_GRACE_MS + LIFETIME_MS);
    // The third rotation, its setSecret and finishSecret retried: a pruned key is not brought back.
    const token = randomUUID();
    sm.startRotation(token);
    const run = stepper(sm, database, token);
    for (const Step of ['createSecret', 'setSecret', 'setSecret', 'testSecret', 'finishSecret', 'finishSecret']) await run(Step, t2);
    sm.endRotation();
    await run('finishSecret', t2);
    const kids = sm.keyset().keys.map((k) => k.kid);
    expect(kids).toHaveLength(2);
    expect(kids).not.toContain(first.kid);
    expect((await item(database)).map((k) => k.kid)).toEqual(kids);
    // The retirements live in the item: the second key's counts from the third finish.
    expect((await item(database))[0]?.retiredAt).toBe(later(t2, RETIREMENT_GRACE_MS).toISOString());
  });
});
