/**
 * Revoking a signing key at once (lib/auth/key-revocation.ts, `npm run keys:revoke`) against
 * DynamoDB Local: the revoked key's tokens fail the real verifier (lib/auth/tokens.ts) once the
 * key caches reload, the new key signs at once (even published under 70 s ago) and its tokens pass,
 * the key that signs is never revoked, the write never overwrites a concurrent rotation's (nor a
 * rotation the revocation's), and later rotations keep the revocation.
 */
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ensureTable } from '#infra/dynamodb-local.ts';
import { planRevocation, revokeKey, revokedRetiredAt } from '#lib/auth/key-revocation.ts';
import { forgetCachedKeys } from '#lib/auth/keys/cache.ts';
import { readKeysetFile } from '#lib/auth/keys/file-store.ts';
import { localKeyset, rotateLocalKeys } from '#lib/auth/keys/local.ts';
import {
  LEEWAY_SECONDS,
  type PrivateKey,
  type PublicKey,
  PUBLICATION_LEAD_MS,
  RETIREMENT_GRACE_MS,
  addKey,
  mergePublished,
  newKey,
  publicKeysOf,
  publishedSignerOf,
  retireKeys,
  signingKeyOf,
  stillVerifies,
  withPublishedRetirements,
} from '#lib/auth/keys/model.ts';
import { PublishedKeysChanged, publishKeys, readPublishedItem } from '#lib/auth/keys/table-store.ts';
import { publishedJwks, verificationKey } from '#lib/auth/keys/verification.ts';
import { currentSigningKey, signAccessToken } from '#lib/auth/signing.ts';
import { verifyAccessToken } from '#lib/auth/tokens.ts';
import { config } from '#lib/core/config.ts';
import { createDocumentClient } from '#lib/db/client.ts';
import { type Db, createDb, db } from '#lib/db/service.ts';
import { AppError } from '#lib/core/errors.ts';

const LIFETIME_MS = (config.accessTokenSeconds + LEEWAY_SECONDS) * 1000;
const later = (date: Date, ms: number): Date => new Date(date.getTime() + ms);
const T0 = new Date('2026-03-01T12:00:00.000Z');

/** A table of its own on this file's DynamoDB Local. */
const freshTable = async (): Promise<string> => {
  const table = `revoke-${randomUUID()}`;
  await ensureTable(process.env.DYNAMODB_ENDPOINT as string, table);
  return table;
};
const dbOf = (table: string): Db => createDb(createDocumentClient(), table);
const freshDir = (): string => mkdtempSync(join(tmpdir(), 'roster-revoke-'));

/** The item as stored (consistent read); throws if there is none. */
const itemOf = async (database: Db) => {
  const item = await readPublishedItem(database, true);
  if (!item) throw new Error('no public keys item');
  return item;
};
const entry = (keys: readonly PublicKey[], kid: string | undefined): PublicKey | undefined => keys.find((k) => k.kid === kid);

/** A first key (A) a day before `t1`, then a local rotation at `t1` that retires A at t1 + grace and adds B. */
const rotated = async (t1 = later(T0, 86_400_000)) => {
  const table = await freshTable();
  const database = dbOf(table);
  const dir = freshDir();
  const [a] = (await localKeyset(database, dir, later(t1, -86_400_000))).keys as [PrivateKey];
  const keyset = await rotateLocalKeys(database, dir, t1);
  const b = keyset.keys.at(-1) as PrivateKey;
  return { table, database, dir, a, b, keyset, t1 };
};

/**
 * A Db on `table` whose first PutItem waits for `meanwhile` (made through another client): the
 * writer has read the item and is about to write when another writer gets in first, every time.
 */
const pausedBeforeFirstPut = (table: string, meanwhile: () => Promise<unknown>): Db => {
  const client = createDocumentClient();
  let paused = false;
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (!paused && /^Put(Item)?Command$/.test(context.commandName ?? '')) {
        paused = true;
        await meanwhile();
      }
      return next(args);
    },
    { step: 'initialize', name: 'pausedBeforeFirstPut' },
  );
  return createDb(client, table);
};

describe('revoking a key after a rotation', () => {
  it('makes the real verifier refuse its tokens once the key caches reload; the new key signs at once and its tokens pass', async () => {
    const actor = { userUuid: randomUUID(), email: 'revoke@example.com', sessionId: randomUUID() };
    forgetCachedKeys();
    const old = await currentSigningKey(); // the file's first key, published now
    const oldToken = (await signAccessToken(actor, new Date())).token;
    expect((await verifyAccessToken(oldToken)).userUuid).toBe(actor.userUuid);

    const keyset = await rotateLocalKeys(db(), config.dataDir, new Date());
    const added = keyset.keys.at(-1) as PrivateKey;
    // Without a revocation the old key signs on until the new one has been published 70 s.
    expect((await currentSigningKey()).kid).toBe(old.kid);
    expect((await verifyAccessToken(oldToken)).sessionId).toBe(actor.sessionId);

    const now = new Date();
    const result = await revokeKey(db(), old.kid, now);
    expect(result).toMatchObject({
      outcome: 'revoked',
      key: { kid: old.kid, retiredAt: revokedRetiredAt(now) },
      signer: { kid: added.kid },
    });
    expect(Date.parse(revokedRetiredAt(now))).toBe(now.getTime() - LIFETIME_MS - 1000);
    const item = await itemOf(db());
    expect(entry(item.keys, old.kid)?.retiredAt).toBe(revokedRetiredAt(now));
    // The new key keeps its publication date: it is less than 70 s old.
    expect(now.getTime() - Date.parse(entry(item.keys, added.kid)?.publishedAt ?? '')).toBeLessThan(PUBLICATION_LEAD_MS);

    // A warm process keeps the keys it loaded (up to 5 minutes): it still accepts the old key's token.
    expect((await verifyAccessToken(oldToken)).userUuid).toBe(actor.userUuid);
    forgetCachedKeys(); // its cache expires
    await expect(verifyAccessToken(oldToken)).rejects.toSatisfy((e) => e instanceof AppError && e.code === 'unauthorized');
    expect(await verificationKey(old.kid, 'EdDSA')).toBeUndefined();
    expect((await publishedJwks()).keys.map((k) => k.kid)).toEqual([added.kid]);

    // The signing rule: no older key can sign, so the fresh one signs although published under 70 s ago.
    expect(signingKeyOf(keyset, item.keys, new Date())?.kid).toBe(added.kid);
    const signer = await currentSigningKey();
    expect(signer.kid).toBe(added.kid);
    const newToken = (await signAccessToken(actor, new Date())).token;
    expect((await verifyAccessToken(newToken)).sessionId).toBe(actor.sessionId);

    // Again: already revoked, nothing written.
    const again = await revokeKey(db(), old.kid, later(now, 60_000));
    expect(again).toMatchObject({ outcome: 'already-revoked', key: { kid: old.kid, retiredAt: revokedRetiredAt(now) } });
    expect(await itemOf(db())).toEqual(item);
  });

  it('says which key signs by the same rule as the signers, and that the earlier retirement counts in every later rotation', async () => {
    const { database, dir, a, b, keyset, t1 } = await rotated();
    const t2 = later(t1, 10_000); // B published 10 s ago
    const result = await revokeKey(database, a.kid, t2);
    if (result.outcome !== 'revoked') throw new Error(result.outcome);
    expect(result.signer.kid).toBe(b.kid);
    expect(publishedSignerOf(result.keys, t2)?.kid).toBe(signingKeyOf(keyset, result.keys, t2)?.kid);
    // Without the revocation A would sign until B has been published PUBLICATION_LEAD_MS.
    const before = (await itemOf(database)).keys.map((k) =>
      k.kid === a.kid ? { ...k, retiredAt: later(t1, RETIREMENT_GRACE_MS).toISOString() } : k,
    );
    expect(signingKeyOf(keyset, before, t2)?.kid).toBe(a.kid);
    expect(signingKeyOf(keyset, (await itemOf(database)).keys, t2)?.kid).toBe(b.kid);

    // The deployed rotation's steps (lib/auth/key-rotation.ts) on the revoked item: the earlier retiredAt wins.
    const revoked = (await itemOf(database)).keys;
    const secret = { keys: keyset.keys }; // the secret still holds A, retired at t1 + grace
    expect(withPublishedRetirements(secret, revoked).keys.find((k) => k.kid === a.kid)?.retiredAt).toBe(revokedRetiredAt(t2));
    expect((await addKey(withPublishedRetirements(secret, revoked), t2)).keys.map((k) => k.kid)).not.toContain(a.kid); // createSecret prunes it
    const finished = retireKeys(mergePublished(publicKeysOf(secret), revoked), new Set([a.kid]), later(t2, 60_000)); // finishSecret
    expect(entry(finished, a.kid)?.retiredAt).toBe(revokedRetiredAt(t2));

    // The next local rotation drops A from the item and the file; B retires from it as usual.
    const t3 = later(t2, 60_000);
    const next = await rotateLocalKeys(database, dir, t3);
    const item = await itemOf(database);
    expect(item.keys.map((k) => k.kid)).toEqual([b.kid, next.keys.at(-1)?.kid]);
    expect((await readKeysetFile(dir))?.keys.map((k) => k.kid)).toEqual(item.keys.map((k) => k.kid));
    expect(entry(item.keys, b.kid)?.retiredAt).toBe(later(t3, RETIREMENT_GRACE_MS).toISOString());
  });
});

describe('refuses, writing nothing', () => {
  it('the only key, which signs: revoking it would leave no key to sign', async () => {
    const database = dbOf(await freshTable());
    const [a] = (await localKeyset(database, freshDir(), T0)).keys as [PrivateKey];
    const before = await itemOf(database);
    expect(await revokeKey(database, a.kid, later(T0, 86_400_000))).toMatchObject({ outcome: 'only-signer', key: { kid: a.kid } });
    expect(await itemOf(database)).toEqual(before);
  });

  it('the new key of a rotation, and the old one while the rotation is unfinished (deployed: published, not yet current)', async () => {
    const { database, a, b, t1 } = await rotated();
    expect(await revokeKey(database, b.kid, t1)).toMatchObject({ outcome: 'only-signer' });
    // setSecret done, finishSecret not: both keys published, neither retired; AWSCURRENT still holds A alone.
    const pending = dbOf(await freshTable());
    await publishKeys(pending, publicKeysOf({ keys: [a, b] }), t1);
    const before = await itemOf(pending);
    expect(await revokeKey(pending, a.kid, t1)).toMatchObject({ outcome: 'only-signer', key: { kid: a.kid } });
    expect(await itemOf(pending)).toEqual(before);
    // Every other key retired too: nothing would be left to sign.
    const bothRetired = dbOf(await freshTable());
    const retiredAt = later(t1, RETIREMENT_GRACE_MS).toISOString();
    await publishKeys(
      bothRetired,
      publicKeysOf({ keys: [a, b] }).map((k) => ({ ...k, retiredAt })),
      t1,
    );
    expect(await revokeKey(bothRetired, a.kid, t1)).toMatchObject({ outcome: 'only-signer' });
  });

  it('an unknown kid, and a table without keys', async () => {
    const { database, t1 } = await rotated();
    const before = await itemOf(database);
    expect(await revokeKey(database, (await newKey('EdDSA', T0)).kid, t1)).toEqual({ outcome: 'unknown' });
    expect(await itemOf(database)).toEqual(before);
    const empty = dbOf(await freshTable());
    expect(await revokeKey(empty, 'k1', T0)).toEqual({ outcome: 'unknown' });
    expect(await readPublishedItem(empty, true)).toBeNull();
  });

  it('a key whose tokens have all expired counts as revoked already', async () => {
    const a = await newKey('EdDSA', T0);
    const t1 = later(T0, 86_400_000);
    const retired = { ...publicKeysOf({ keys: [a] })[0], retiredAt: T0.toISOString() } as PublicKey;
    expect(planRevocation([retired], a.kid, later(T0, LIFETIME_MS))).toEqual({ outcome: 'already-revoked', key: retired });
    // A millisecond earlier its tokens may still be valid: it is retired, not revoked (and here no other key could sign).
    expect(stillVerifies(retired, later(T0, LIFETIME_MS - 1))).toBe(true);
    expect(planRevocation([retired], a.kid, later(T0, LIFETIME_MS - 1)).outcome).toBe('only-signer');
    expect(planRevocation([retired], a.kid, t1).outcome).toBe('already-revoked');
  });
});

describe('concurrent writers (conditional writes on what each read)', () => {
  it("a rotation that writes between the revocation's read and write is not lost: the revocation reads again", async () => {
    const { table, database, dir, a, b, t1 } = await rotated();
    const t2 = later(t1, 5000);
    // The bare condition: the item as read, or nothing.
    const read = await itemOf(database);
    const plan = planRevocation(read.keys, a.kid, t2);
    if (plan.outcome !== 'revoked') throw new Error(plan.outcome);
    const rotation = await rotateLocalKeys(database, dir, t2);
    const c = rotation.keys.at(-1) as PrivateKey;
    await expect(publishKeys(database, plan.keys, t2, read)).rejects.toBeInstanceOf(PublishedKeysChanged);
    // The keys themselves are compared, not only the write time.
    const stamped = { ...read, updatedAt: (await itemOf(database)).updatedAt };
    await expect(publishKeys(database, plan.keys, t2, stamped)).rejects.toBeInstanceOf(PublishedKeysChanged);
    expect(entry((await itemOf(database)).keys, c.kid)).toBeDefined();
    expect(entry((await itemOf(database)).keys, a.kid)?.retiredAt).toBe(later(t1, RETIREMENT_GRACE_MS).toISOString());

    // revokeKey itself, with another rotation getting in between its read and its write.
    const t3 = later(t2, 5000);
    let d: PrivateKey | undefined;
    const paused = pausedBeforeFirstPut(table, async () => {
      d = (await rotateLocalKeys(database, dir, t3)).keys.at(-1);
    });
    // Of B, C and D (published 10 s, 5 s and 0 s ago) none is ripe, so the oldest signs until D is.
    expect(await revokeKey(paused, a.kid, t3)).toMatchObject({ outcome: 'revoked', signer: { kid: b.kid } });
    const item = await itemOf(database);
    expect(item.keys.map((k) => k.kid)).toEqual([a.kid, ...rotation.keys.slice(1).map((k) => k.kid), d?.kid]);
    expect(entry(item.keys, a.kid)?.retiredAt).toBe(revokedRetiredAt(t3));
    expect(entry(item.keys, d?.kid)?.publishedAt).toBe(t3.toISOString());
  });

  it('a local rotation that read before the revocation wrote fails and replaces nothing, rather than undo it', async () => {
    const { table, database, dir, a, t1 } = await rotated();
    const t2 = later(t1, 5000);
    const fileBefore = await readKeysetFile(dir);
    const paused = pausedBeforeFirstPut(table, () => revokeKey(database, a.kid, t2));
    await expect(rotateLocalKeys(paused, dir, t2)).rejects.toBeInstanceOf(PublishedKeysChanged);
    expect(await readKeysetFile(dir)).toEqual(fileBefore);
    expect(entry((await itemOf(database)).keys, a.kid)?.retiredAt).toBe(revokedRetiredAt(t2));
    // Run again, it rotates and keeps the revocation (here: drops the revoked key).
    const next = await rotateLocalKeys(database, dir, t2);
    expect((await itemOf(database)).keys.map((k) => k.kid)).toEqual(next.keys.map((k) => k.kid));
    expect(next.keys.map((k) => k.kid)).not.toContain(a.kid);
  });

  it('run at the same moment, again and again: the revocation always stands, and a rotation either lands whole or fails whole', async () => {
    for (let round = 0; round < 8; round++) {
      const { database, dir, a, keyset, t1 } = await rotated();
      const t2 = later(t1, 5000);
      const [revocation, rotation] = await Promise.allSettled([revokeKey(database, a.kid, t2), rotateLocalKeys(database, dir, t2)]);
      expect(revocation).toMatchObject({ status: 'fulfilled', value: { outcome: 'revoked' } });
      const item = await itemOf(database);
      const file = await readKeysetFile(dir);
      const a2 = entry(item.keys, a.kid);
      // Revoked, or (the rotation read the revoked item) dropped: either way refused.
      expect(a2 === undefined || !stillVerifies(a2, t2), `round ${round}`).toBe(true);
      if (rotation.status === 'fulfilled') {
        expect(file).toEqual(rotation.value);
        expect(item.keys.map((k) => k.kid)).toContain(rotation.value.keys.at(-1)?.kid);
      } else {
        expect(rotation.reason).toBeInstanceOf(PublishedKeysChanged);
        expect(file).toEqual(keyset);
      }
    }
  });
});

describe('npm run keys:revoke', () => {
  const script = fileURLToPath(new URL('../../scripts/keys-revoke.ts', import.meta.url));
  const run = (args: string[], env: Record<string, string>) => {
    const result = spawnSync(process.execPath, [script, ...args], {
      encoding: 'utf8',
      timeout: 30_000,
      env: {
        PATH: process.env.PATH,
        AWS_ACCESS_KEY_ID: 'local',
        AWS_SECRET_ACCESS_KEY: 'local',
        // The test emulator's patience (test/setup.ts), not the deployed defaults of 1 s and 2 s.
        DYNAMODB_CONNECT_TIMEOUT_MS: process.env.DYNAMODB_CONNECT_TIMEOUT_MS,
        DYNAMODB_REQUEST_TIMEOUT_MS: process.env.DYNAMODB_REQUEST_TIMEOUT_MS,
        ...env,
      },
    });
    return { code: result.status, out: result.stdout, err: result.stderr };
  };

  it('revokes, says what it did, says so when run again, and refuses the signing key, an unknown kid and a bad call', async () => {
    const { table, database, a, b } = await rotated(new Date(Date.now() - 20_000)); // B published 20 s ago
    const env = { DYNAMODB_ENDPOINT: process.env.DYNAMODB_ENDPOINT as string, TABLE_NAME: table };

    const signing = run([b.kid], env);
    expect(signing.code).toBe(1);
    expect(signing.err).toMatch(
      new RegExp(`Key ${b.kid} is the key that signs.*503; nothing written\\. Rotate first \\(DYNAMODB_ENDPOINT=.* npm run keys:rotate`),
    );
    const before = await itemOf(database);

    const revoked = run([a.kid], env);
    expect(revoked.code, revoked.err).toBe(0);
    const retiredAt = entry((await itemOf(database)).keys, a.kid)?.retiredAt ?? '';
    expect(stillVerifies({ retiredAt }, new Date())).toBe(false);
    expect(revoked.out).toContain(`Revoked key ${a.kid} in table ${table} at ${env.DYNAMODB_ENDPOINT}: retiredAt is now ${retiredAt}`);
    expect(revoked.out).toContain(`Signs now: ${b.kid}`);
    expect(revoked.out).toMatch(/Within 5 minutes .* verifiers refuse tokens of/);
    expect(revoked.out).toMatch(new RegExp(`${b.kid} was published less than 70 s ago`));
    expect(revoked.out).toMatch(/Sessions stay valid: refresh tokens are unaffected/);
    expect((await itemOf(database)).keys.map((k) => k.kid)).toEqual(before.keys.map((k) => k.kid));

    const again = run([a.kid], env);
    expect(again.code).toBe(0);
    expect(again.out).toContain(`Key ${a.kid} is already revoked`);

    const unknown = run(['no-such-key'], env);
    expect(unknown.code).toBe(1);
    expect(unknown.err).toContain('No key no-such-key in the public keys item');
    // A kid may begin with "-": it is the kid, not an option.
    const dashed = run(['-no-such-key'], env);
    expect(dashed.code).toBe(1);
    expect(dashed.err).toContain('No key -no-such-key in the public keys item');

    expect(run([], env).code).toBe(2);
    expect(run([a.kid, b.kid], env).code).toBe(2);
    const deployed = run([a.kid], { TABLE_NAME: table });
    expect(deployed.code).toBe(2);
    expect(deployed.err).toMatch(/set AWS_REGION/);
  });

  it('tells a deployed operator to rotate the secret first', async () => {
    const { table, b } = await rotated();
    // The regional endpoint is DynamoDB Local here, but without DYNAMODB_ENDPOINT: the deployed mode.
    const arn = 'arn:aws:secretsmanager:us-east-1:000000000000:secret:SigningKey-AbCdEf';
    const result = run([b.kid], {
      AWS_ENDPOINT_URL: process.env.DYNAMODB_ENDPOINT as string,
      AWS_REGION: 'us-east-1',
      TABLE_NAME: table,
      SIGNING_KEY_SECRET_ARN: arn,
    });
    expect(result.code, result.err).toBe(1);
    expect(result.err).toContain(`Rotate first (aws secretsmanager rotate-secret --secret-id ${arn}), wait for the rotation to finish`);
  });
});
