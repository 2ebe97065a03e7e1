import {
  DescribeSecretCommand,
  PutSecretValueCommand,
  type SecretsManagerClient,
  UpdateSecretVersionStageCommand,
} from '@aws-sdk/client-secrets-manager';
import { CompactSign, compactVerify, importJWK } from 'jose';
import { log } from '#lib/core/log.ts';
import type { Db } from '#lib/db/service.ts';
import {
  type Keyset,
  type PrivateKey,
  type PublicKey,
  addKey,
  mergePublished,
  newestKeyOf,
  parseKeyset,
  publicKeysOf,
  retireKeys,
  signingKeyOf,
  stillVerifies,
  withPublishedRetirements,
  publicMembers,
  publicPartOf,
} from './keys/model.ts';
import { readPublishedKeys, updatePublishedKeys } from './keys/table-store.ts';
import { secretString } from './secret-store.ts';

/**
 * The steps of Secrets Manager's rotation of the signing-key secret (docs/keys.md), run by
 * functions/keys-rotate.ts (not an API route). Each call is one step of a rotation. Secrets
 * Manager may call a step again, so each one first checks what an earlier attempt did, and doing
 * it twice gives what doing it once does:
 * - createSecret stores AWSPENDING: the current keyset, keys whose tokens have all expired dropped,
 *   plus a new key. It retires nothing. It reuses a pending keyset made less than
 *   PENDING_MAX_AGE_MS ago; an older one is abandoned (see there).
 * - setSecret publishes the pending public keys to the table item. The key signing now stays
 *   unretired, so a rotation that stops here or later leaves it signing and verifying.
 * - testSecret proves that the new key and the one signing now both verify against the item, and
 *   that the pending keyset keeps every key whose tokens may still be valid.
 * - finishSecret makes the new version AWSCURRENT, and only then records in the item that the
 *   older keys retire at (now + RETIREMENT_GRACE_MS). Signers take the new key once it has been
 *   published PUBLICATION_LEAD_MS and their cache (5 min) expires.
 * A failed step throws, so the rotation stops there and the function's alarm fires.
 */
export interface RotationEvent {
  Step: string;
  SecretId: string;
  ClientRequestToken: string;
}

const PENDING = 'AWSPENDING';
const CURRENT = 'AWSCURRENT';

/**
 * A pending keyset older than this is not reused. Versions cannot be changed, so createSecret
 * removes its AWSPENDING label and fails: the next RotateSecret starts a new version from the
 * keys as they are then.
 */
export const PENDING_MAX_AGE_MS = 60 * 60_000;

/** Signs a probe with a private key and verifies it with the published public key of that kid. */
const checkPublished = async (key: PrivateKey, published: readonly PublicKey[], now: Date): Promise<void> => {
  const match = published.find((p) => p.kid === key.kid && publicPartOf(p) === publicPartOf(key.privateJwk) && stillVerifies(p, now));
  if (!match) throw new Error(`key ${key.kid} is not published`);
  const probe = await new CompactSign(new TextEncoder().encode('roster key check'))
    .setProtectedHeader({ alg: key.alg, kid: key.kid })
    .sign(await importJWK(key.privateJwk, key.alg));
  await compactVerify(probe, await importJWK(publicMembers(match), match.alg), { algorithms: [key.alg] });
};

const notFound = (error: unknown): undefined => {
  if ((error as Error).name !== 'ResourceNotFoundException') throw error;
  return undefined;
};

/**
 * After AWSCURRENT moved to this version: every key of it but the new one gets retiredAt = now +
 * RETIREMENT_GRACE_MS in the item, unless a retirement is recorded already. The new key is
 * (re)published if missing; an older key the item no longer holds (its tokens all expired) is not
 * brought back. Of the keys only the item holds, those newer than this version's (a later
 * rotation's, published by its setSecret) stay; older ones (of an abandoned pending keyset, which
 * never signed) go.
 */
const recordRetirement = async (database: Db, keyset: Keyset, now: Date): Promise<void> => {
  const added = newestKeyOf(keyset.keys);
  const older = new Set(keyset.keys.filter((k) => k !== added).map((k) => k.kid));
  await updatePublishedKeys(database, now, (published) => {
    const ours = { keys: keyset.keys.filter((k) => k === added || published.some((p) => p.kid === k.kid)) };
    const later = published.filter(
      (p) => !keyset.keys.some((k) => k.kid === p.kid) && added !== undefined && p.createdAt > added.createdAt,
    );
    return [...retireKeys(mergePublished(publicKeysOf(ours), published), older, now), ...later];
  });
  log.info('rotation: older keys retire', { kid: added?.kid, retired: [...older] });
};

export const rotationStep = async (sm: SecretsManagerClient, database: Db, event: RotationEvent, now: Date): Promise<void> => {
  const { SecretId, ClientRequestToken: token, Step } = event;
  const described = await sm.send(new DescribeSecretCommand({ SecretId }));
  if (!described.RotationEnabled) throw new Error(`rotation is not enabled for ${SecretId}`);
  const versions = described.VersionIdsToStages ?? {};
  const stages = versions[token];
  if (!stages) throw new Error(`version ${token} has no stage for rotation`);

  const current = async () => parseKeyset(await secretString(sm, { SecretId, VersionStage: CURRENT }));
  const published = async () => (await readPublishedKeys(database, true)) ?? [];
  const ours = async () => parseKeyset(await secretString(sm, { SecretId, VersionId: token }));
  if (stages.includes(CURRENT)) {
    // A finishSecret retried after it moved AWSCURRENT: the retirement may not be recorded yet.
    if (Step === 'finishSecret') return recordRetirement(database, await ours(), now);
    return log.info('rotation: version already current', { Step, token });
  }
  if (!stages.includes(PENDING)) throw new Error(`version ${token} is not ${PENDING}`);

  const pending = async () => parseKeyset(await secretString(sm, { SecretId, VersionId: token, VersionStage: PENDING }));
  switch (Step) {
    case 'createSecret': {
      const from = await current();
      const existing = await pending().catch(notFound);
      if (existing) {
        const madeAt = newestKeyOf(existing.keys)?.createdAt;
        if (madeAt !== undefined && now.getTime() - Date.parse(madeAt) <= PENDING_MAX_AGE_MS) {
          return log.info('rotation: pending keyset exists', { token, madeAt });
        }
        await sm.send(new UpdateSecretVersionStageCommand({ SecretId, VersionStage: PENDING, RemoveFromVersionId: token }));
        throw new Error(
          `the pending keyset ${token} was made at ${madeAt ?? '(unknown)'}, over ${PENDING_MAX_AGE_MS / 60_000} minutes ago: ` +
            `its ${PENDING} label is removed so that the next rotation starts afresh`,
        );
      }
      const next = await addKey(withPublishedRetirements(from, await published()), now);
      try {
        await sm.send(
          new PutSecretValueCommand({ SecretId, ClientRequestToken: token, SecretString: JSON.stringify(next), VersionStages: [PENDING] }),
        );
      } catch (error) {
        // A concurrent attempt stored its own pending keyset first: that one stands.
        if (await pending().catch(notFound)) return log.info('rotation: pending keyset stored by another attempt', { token });
        throw error;
      }
      return log.info('rotation: created', { token, kid: newestKeyOf(next.keys)?.kid, keys: next.keys.length });
    }
    case 'setSecret': {
      // The new key joins the item, and the key signing now stays unretired. A published key of
      // AWSCURRENT whose tokens may be valid stays even if the pending keyset lacked it (testSecret
      // then fails); keys only the item holds (an abandoned pending keyset's) go, and a key the
      // item no longer holds is not brought back.
      // Conditional on the item as read: a revocation written meanwhile is re-read, never undone.
      const [next, from] = await Promise.all([pending(), current()]);
      await updatePublishedKeys(database, now, (items) => {
        const kept = withPublishedRetirements(from, items).keys.filter(
          (k) => items.some((p) => p.kid === k.kid) && stillVerifies(k, now) && !next.keys.some((n) => n.kid === k.kid),
        );
        return mergePublished(publicKeysOf({ keys: [...kept, ...next.keys] }), items);
      });
      return log.info('rotation: published', { token });
    }
    case 'testSecret': {
      const next = await pending();
      const added = newestKeyOf(next.keys);
      if (!added) throw new Error('the pending keyset has no key');
      const items = await published();
      const from = withPublishedRetirements(await current(), items);
      // Finishing must not drop a key verifiers accept now (published, not retired a token lifetime ago).
      const accepted = (k: PrivateKey) => stillVerifies(k, now) && items.some((p) => p.kid === k.kid);
      const lost = from.keys.filter((k) => accepted(k) && !next.keys.some((n) => n.kid === k.kid));
      if (lost.length > 0) throw new Error(`the pending keyset lacks keys whose tokens may be valid: ${lost.map((k) => k.kid).join(', ')}`);
      // Nor a sealing key: every second factor sealed under it would be lost (docs/mfa.md).
      const lostSeals = (from.sealKeys ?? []).filter((k) => !next.sealKeys?.some((n) => n.kid === k.kid && n.key === k.key));
      if (lostSeals.length > 0) throw new Error(`the pending keyset lacks sealing keys: ${lostSeals.map((k) => k.kid).join(', ')}`);
      const signingNow = signingKeyOf(from, items, now);
      for (const key of signingNow ? [added, signingNow] : [added]) await checkPublished(key, items, now);
      return log.info('rotation: tested', { token });
    }
    case 'finishSecret': {
      const from = Object.entries(versions).find(([, s]) => s.includes(CURRENT))?.[0];
      await sm.send(
        new UpdateSecretVersionStageCommand({
          SecretId,
          VersionStage: CURRENT,
          MoveToVersionId: token,
          ...(from ? { RemoveFromVersionId: from } : {}),
        }),
      );
      log.info('rotation: finished', { token });
      return recordRetirement(database, await ours(), now);
    }
    default:
      throw new Error(`unknown rotation step ${Step}`);
  }
};
