/**
 * The signing-key model (lib/auth/keys.ts) for real: key generation, rotation, pruning, the
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
import { SignJWT, calculateJwkThumbprint, importJWK, jwtVerify } from 'jose';
import { describe, expect, inject, it } from 'vitest';
import { rotationStep } from '../../functions/keys-rotate.ts';
import { ensureTable } from '../../infra/dynamodb-local.ts';
import {
  CACHE_MAX_AGE_MS,
  type Keyset,
  KeyCache,
  LEEWAY_SECONDS,
  type PrivateKey,
  RELOAD_MIN_INTERVAL_MS,
  RETIREMENT_GRACE_MS,
  algorithmsFrom,
  currentSigningKey,
  forgetCachedKeys,
  jwksOf,
  localKeyset,
  newKey,
  parseKeyset,
  publicKeysOf,
  publishKeys,
  readKeysetFile,
  readPublishedKeys,
  rotateKeyset,
  rotateLocalKeys,
  signingKeyOf,
  stillVerifies,
  verificationKey,
} from '../../lib/auth/keys.ts';
import { config } from '../../lib/config.ts';
import { createDocumentClient } from '../../lib/db/client.ts';
import { type Db, createDb, db } from '../../lib/db/service.ts';

const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k'];
const LIFETIME_MS = (config.accessTokenSeconds + LEEWAY_SECONDS) * 1000;
const at = (iso: string): Date => new Date(iso);
const later = (date: Date, ms: number): Date => new Date(date.getTime() + ms);
const T0 = at('2026-03-01T12:00:00.000Z');

/** A table of its own on the shared DynamoDB Local, for tests that must not see each other's item. */
const freshDb = async (): Promise<Db> => {
  const table = `keys-${randomUUID()}`;
  await ensureTable(inject('dynamodbEndpoint'), table);
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
    const { kty, crv, x } = key.privateJwk;
    expect(key.kid).toBe(await calculateJwkThumbprint({ kty, crv, x }));
    expect(key.kid).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect((await newKey('EdDSA', T0)).kid).not.toBe(key.kid);
  });

  it('can be P-256 (ES256) when configured, and sign and verify as such', async () => {
    const key = await newKey('ES256', T0);
    expect(key.privateJwk).toMatchObject({ kty: 'EC', crv: 'P-256' });
    const [pub] = publicKeysOf({ keys: [key] });
    const token = await new SignJWT({ a: 1 }).setProtectedHeader({ alg: 'ES256', kid: key.kid }).sign(await importJWK(key.privateJwk, 'ES256'));
    const { kty, crv, x, y } = pub as NonNullable<typeof pub>;
    await expect(jwtVerify(token, await importJWK({ kty, crv, x, y }, 'ES256'), { algorithms: ['ES256'] })).resolves.toBeDefined();
  });

  it('are configured from TOKEN_ALGORITHMS: EdDSA by default, ES256 allowed, nothing symmetric or unsigned', () => {
    expect(algorithmsFrom(undefined)).toEqual(['EdDSA']);
    expect(algorithmsFrom(' ')).toEqual(['EdDSA']);
    expect(algorithmsFrom('EdDSA, ES256')).toEqual(['EdDSA', 'ES256']);
    for (const bad of ['HS256', 'none', 'RS256', 'EdDSA,HS512', 'eddsa']) expect(() => algorithmsFrom(bad), bad).toThrow(/TOKEN_ALGORITHMS/);
  });

  it('verify until a token lifetime plus leeway after retirement, and not a millisecond longer', () => {
    const retiredAt = T0.toISOString();
    expect(stillVerifies({}, later(T0, 10 * 365 * 86_400_000))).toBe(true);
    expect(stillVerifies({ retiredAt }, later(T0, LIFETIME_MS - 1))).toBe(true);
    expect(stillVerifies({ retiredAt }, later(T0, LIFETIME_MS))).toBe(false);
  });
});

describe('rotation of a keyset', () => {
  it('starts from nothing with one signing key', async () => {
    const keyset = await rotateKeyset({ keys: [] }, T0);
    expect(keyset.keys).toHaveLength(1);
    expect(signingKeyOf(keyset)).toBe(keyset.keys[0]);
  });

  it('adds a key that signs and retires the old one, which keeps signing in warm processes for the grace time', async () => {
    const first = await rotateKeyset({ keys: [] }, T0);
    const t1 = later(T0, 30 * 86_400_000);
    const second = await rotateKeyset(first, t1);
    const [old, added] = second.keys as [PrivateKey, PrivateKey];
    expect(old.kid).toBe(first.keys[0]?.kid);
    expect(old.retiredAt).toBe(later(t1, RETIREMENT_GRACE_MS).toISOString());
    expect(RETIREMENT_GRACE_MS).toBeGreaterThanOrEqual(CACHE_MAX_AGE_MS);
    expect(signingKeyOf(second)).toBe(added);
    expect(added.createdAt).toBe(t1.toISOString());
    // The old key still verifies for a full token lifetime after it stops signing.
    expect(stillVerifies(old, later(t1, RETIREMENT_GRACE_MS + LIFETIME_MS - 1))).toBe(true);
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
  });

  it('signs with the newest key that is not retired, and never with a retired one', async () => {
    const a = await newKey('EdDSA', T0);
    const b = await newKey('EdDSA', later(T0, 1000));
    expect(signingKeyOf({ keys: [b, a] })).toBe(b);
    expect(signingKeyOf({ keys: [a, { ...b, retiredAt: later(T0, 9e9).toISOString() }] })).toBe(a);
    expect(signingKeyOf({ keys: [{ ...a, retiredAt: T0.toISOString() }] })).toBeUndefined();
    expect(signingKeyOf({ keys: [] })).toBeUndefined();
  });

  it('publishes public members only, and the JWKS holds exactly the keys that still verify, newest first', async () => {
    const first = await rotateKeyset({ keys: [] }, T0);
    const second = await rotateKeyset(first, later(T0, 1000));
    const published = publicKeysOf(second);
    for (const key of published) for (const member of PRIVATE_MEMBERS) expect(key).not.toHaveProperty(member);
    const jwks = jwksOf(published, later(T0, 2000));
    expect(jwks.keys.map((k) => k.kid)).toEqual([second.keys[1]?.kid, second.keys[0]?.kid]);
    for (const key of jwks.keys) {
      expect(Object.keys(key).sort()).toEqual(['alg', 'crv', 'kid', 'kty', 'use', 'x']);
      expect(key).toMatchObject({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig' });
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
    expect(await readPublishedKeys(database, true)).toEqual(publicKeysOf(keyset));
    const raw = await rawItemText(database);
    expect(raw).toContain(keyset.keys[0]?.kid);
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
    expect(old.retiredAt).toBeDefined();
    expect(signingKeyOf(after)).toBe(added);
    expect(await readKeysetFile(dir)).toEqual(after);
    expect(statSync(join(dir, 'signing-keys.json')).mode & 0o777).toBe(0o600);
    expect((await readPublishedKeys(database, true))?.map((k) => k.kid)).toEqual([old.kid, added.kid]);
  });

  it('finds a key published after this process loaded the keys, by reloading on its unknown kid', async () => {
    forgetCachedKeys();
    const { kid } = await currentSigningKey();
    expect(await verificationKey(kid, 'EdDSA')).toBeDefined();
    // Another process publishes a key (the first step of its rotation).
    const extra = await newKey('EdDSA', new Date());
    await publishKeys(db(), [...((await readPublishedKeys(db(), true)) ?? []), ...publicKeysOf({ keys: [extra] })], new Date());
    await new Promise((resolve) => setTimeout(resolve, RELOAD_MIN_INTERVAL_MS + 100));
    expect(await verificationKey(extra.kid, 'EdDSA')).toBeDefined();
    // Our kid under another algorithm, and kids that are not even well formed, find nothing.
    expect(await verificationKey(kid, 'ES256')).toBeUndefined();
    for (const bad of ['../../etc/passwd', "' OR 1=1 --", 'x'.repeat(10_000), '', 42, null, undefined]) {
      expect(await verificationKey(bad, 'EdDSA')).toBeUndefined();
    }
  });
});

describe('deployed stores fail closed (503, no key made up)', () => {
  const keysModule = fileURLToPath(new URL('../../lib/auth/keys.ts', import.meta.url));
  /** Runs `call` on lib/auth/keys.ts in a process configured like a deployed function. */
  const deployed = (env: Record<string, string>, call: string) => {
    const script = `const keys = await import(${JSON.stringify(keysModule)});
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
    await ensureTable(inject('dynamodbEndpoint'), table);
    const dir = freshDir();
    // The regional endpoint deployed is DynamoDB Local here, but without DYNAMODB_ENDPOINT: not local mode.
    const { result, stderr } = deployed({ AWS_ENDPOINT_URL: inject('dynamodbEndpoint'), TABLE_NAME: table, DATA_DIR: dir }, "keys.verificationKey('k1', 'EdDSA')");
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
 * staging labels, RotateSecret's empty AWSPENDING version, and the end of a rotation.
 */
class SecretsDouble {
  readonly id = 'arn:aws:secretsmanager:us-east-1:000000000000:secret:roster-signing-AbCdEf';
  rotationEnabled = true;
  puts = 0;
  readonly versions = new Map<string, { value?: string; stages: string[] }>([
    // As CloudFormation creates the secret (infra/stack.ts): an empty keyset with a filler.
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
        const { VersionId, VersionStage = 'AWSCURRENT' } = command.input;
        const found = [...this.versions].find(([id, v]) => (!VersionId || id === VersionId) && v.stages.includes(VersionStage));
        if (!found?.[1].value) throw this.notFound();
        return { VersionId: found[0], SecretString: found[1].value };
      }
      if (command instanceof PutSecretValueCommand) {
        const { ClientRequestToken: id = '', SecretString, VersionStages = [] } = command.input;
        const existing = this.versions.get(id);
        if (existing?.value !== undefined) throw new Error('a version with this token already exists');
        this.puts++;
        this.versions.set(id, { value: SecretString as string, stages: existing?.stages ?? [] });
        for (const stage of VersionStages) this.move(stage, id);
        return {};
      }
      if (command instanceof UpdateSecretVersionStageCommand) {
        const { VersionStage = '', MoveToVersionId, RemoveFromVersionId } = command.input;
        const current = this.versions.get(RemoveFromVersionId ?? '');
        if (VersionStage !== 'AWSCURRENT' || !current?.stages.includes('AWSCURRENT')) throw new Error('unexpected stage update');
        this.move('AWSPREVIOUS', RemoveFromVersionId);
        this.move('AWSCURRENT', MoveToVersionId);
        return {};
      }
      throw new Error(`the rotation function must not call ${command.constructor.name}`);
    },
  } as unknown as SecretsManagerClient;

  /** RotateSecret: a new version, labelled AWSPENDING, without a value yet. */
  startRotation(token: string): void {
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

const rotate = async (sm: SecretsDouble, database: Db, now: Date, token = randomUUID()): Promise<string> => {
  sm.startRotation(token);
  for (const Step of STEPS) await rotationStep(sm.client, database, { Step, SecretId: sm.id, ClientRequestToken: token }, now);
  sm.endRotation();
  return token;
};

/** Signs like signAccessToken with the current signing key, and verifies with the published key of its kid. */
const roundTrip = async (keyset: Keyset, database: Db, now: Date): Promise<void> => {
  const key = signingKeyOf(keyset) as PrivateKey;
  const token = await new SignJWT({ sub: 'u' }).setProtectedHeader({ alg: key.alg, kid: key.kid }).sign(await importJWK(key.privateJwk, key.alg));
  const published = (await readPublishedKeys(database, true)) ?? [];
  const match = published.find((p) => p.kid === key.kid && stillVerifies(p, now));
  if (!match) throw new Error('signing key not published');
  const { kty, crv, x } = match;
  await jwtVerify(token, await importJWK({ kty, crv, x }, match.alg), { algorithms: ['EdDSA'] });
};

describe('rotation function (functions/keys-rotate.ts) against DynamoDB Local', () => {
  it('makes the first key from the empty secret CloudFormation creates, and publishes it', async () => {
    const sm = new SecretsDouble();
    const database = await freshDb();
    await rotate(sm, database, T0);
    const keyset = sm.keyset();
    expect(keyset.keys).toHaveLength(1);
    expect(await readPublishedKeys(database, true)).toEqual(publicKeysOf(keyset));
    await roundTrip(keyset, database, T0);
    expect(await rawItemText(database)).not.toContain(keyset.keys[0]?.privateJwk.d);
  });

  it('publishes the new key before it becomes current, and keeps the old one verifying', async () => {
    const sm = new SecretsDouble();
    const database = await freshDb();
    await rotate(sm, database, T0);
    const [first] = sm.keyset().keys as [PrivateKey];
    const t1 = later(T0, 30 * 86_400_000);
    const token = randomUUID();
    sm.startRotation(token);
    const step = (Step: string) => rotationStep(sm.client, database, { Step, SecretId: sm.id, ClientRequestToken: token }, t1);
    await step('createSecret');
    await step('setSecret');
    // Published, but not yet the signing key anywhere: AWSCURRENT still holds the first key alone.
    const next = signingKeyOf(sm.keyset('AWSPENDING')) as PrivateKey;
    expect((await readPublishedKeys(database, true))?.map((k) => k.kid)).toEqual([first.kid, next.kid]);
    expect(signingKeyOf(sm.keyset())?.kid).toBe(first.kid);
    await step('testSecret');
    await step('finishSecret');
    sm.endRotation();
    const current = sm.keyset();
    expect(signingKeyOf(current)?.kid).toBe(next.kid);
    expect(current.keys.find((k) => k.kid === first.kid)?.retiredAt).toBe(later(t1, RETIREMENT_GRACE_MS).toISOString());
    await roundTrip(current, database, t1);
    // The retired key's tokens still verify against the item.
    await roundTrip({ keys: [{ ...first }] }, database, t1);
  });

  it('is safe to retry: createSecret again with the same token keeps the pending keyset', async () => {
    const sm = new SecretsDouble();
    const database = await freshDb();
    const token = randomUUID();
    sm.startRotation(token);
    const event = { Step: 'createSecret', SecretId: sm.id, ClientRequestToken: token };
    await rotationStep(sm.client, database, event, T0);
    const pending = sm.keyset('AWSPENDING');
    await rotationStep(sm.client, database, event, later(T0, 5000));
    expect(sm.keyset('AWSPENDING')).toEqual(pending);
    expect(sm.puts).toBe(1);
    // Steps of a version already current do nothing.
    for (const Step of STEPS) await rotationStep(sm.client, database, { Step, SecretId: sm.id, ClientRequestToken: token }, T0);
    sm.endRotation();
    for (const Step of STEPS) await rotationStep(sm.client, database, { Step, SecretId: sm.id, ClientRequestToken: token }, T0);
    expect(sm.puts).toBe(1);
  });

  it('fails testSecret, and so never finishes, when the new key is not published', async () => {
    const sm = new SecretsDouble();
    const database = await freshDb();
    await rotate(sm, database, T0);
    const token = randomUUID();
    sm.startRotation(token);
    const step = (Step: string) => rotationStep(sm.client, database, { Step, SecretId: sm.id, ClientRequestToken: token }, T0);
    await step('createSecret');
    await expect(step('testSecret')).rejects.toThrow(/not published/);
    expect(signingKeyOf(sm.keyset())?.kid).toBe(sm.keyset().keys[0]?.kid);
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
    const t2 = later(t1, RETIREMENT_GRACE_MS + LIFETIME_MS);
    await rotate(sm, database, t2);
    const kids = sm.keyset().keys.map((k) => k.kid);
    expect(kids).toHaveLength(2);
    expect(kids).not.toContain(first.kid);
    expect((await readPublishedKeys(database, true))?.map((k) => k.kid)).toEqual(kids);
  });
});
