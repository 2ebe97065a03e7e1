import {
  DescribeSecretCommand,
  PutSecretValueCommand,
  type SecretsManagerClient,
  UpdateSecretVersionStageCommand,
} from '@aws-sdk/client-secrets-manager';
import type { Context } from 'aws-lambda';
import { CompactSign, compactVerify, importJWK } from 'jose';
import {
  type PrivateKey,
  type PublicKey,
  parseKeyset,
  publicKeysOf,
  publishKeys,
  readPublishedKeys,
  rotateKeyset,
  secretString,
  secretsManager,
  signingKeyOf,
  stillVerifies,
} from '../lib/auth/keys.ts';
import { type Db, db } from '../lib/db/service.ts';
import { log } from '../lib/log.ts';

/**
 * Secrets Manager's rotation function for the signing-key secret (not an API route; docs/keys.md).
 * Each call is one step of a rotation, and each step may be retried, so it first checks what an
 * earlier attempt did:
 * - createSecret stores the rotated keyset (old keys retired or pruned, a new key) as AWSPENDING;
 * - setSecret publishes its public keys to the table item, before anything signs with the new key;
 * - testSecret proves that the new signing key and the one signing now both verify against the item;
 * - finishSecret makes the new version AWSCURRENT: signers switch within their cache age (5 min).
 * A failed step throws, so Secrets Manager retries the rotation and the function's alarm fires.
 */
export interface RotationEvent {
  Step: string;
  SecretId: string;
  ClientRequestToken: string;
}

const PENDING = 'AWSPENDING';
const CURRENT = 'AWSCURRENT';

/** Signs a probe with a private key and verifies it with the published public key of that kid. */
const checkPublished = async (key: PrivateKey, published: readonly PublicKey[], now: Date): Promise<void> => {
  const match = published.find((p) => p.kid === key.kid && stillVerifies(p, now));
  if (!match) throw new Error(`key ${key.kid} is not published`);
  const probe = await new CompactSign(new TextEncoder().encode('roster key check'))
    .setProtectedHeader({ alg: key.alg, kid: key.kid })
    .sign(await importJWK(key.privateJwk, key.alg));
  const { kty, crv, x, y } = match;
  await compactVerify(probe, await importJWK({ kty, crv, x, ...(y ? { y } : {}) }, match.alg), { algorithms: [key.alg] });
};

export const rotationStep = async (sm: SecretsManagerClient, database: Db, event: RotationEvent, now: Date): Promise<void> => {
  const { SecretId, ClientRequestToken: token, Step } = event;
  const described = await sm.send(new DescribeSecretCommand({ SecretId }));
  if (!described.RotationEnabled) throw new Error(`rotation is not enabled for ${SecretId}`);
  const versions = described.VersionIdsToStages ?? {};
  const stages = versions[token];
  if (!stages) throw new Error(`version ${token} has no stage for rotation`);
  if (stages.includes(CURRENT)) return log.info('rotation: version already current', { Step, token });
  if (!stages.includes(PENDING)) throw new Error(`version ${token} is not ${PENDING}`);

  const current = async () => parseKeyset(await secretString(sm, { SecretId, VersionStage: CURRENT }));
  const pending = async () => parseKeyset(await secretString(sm, { SecretId, VersionId: token, VersionStage: PENDING }));
  switch (Step) {
    case 'createSecret': {
      const from = await current();
      try {
        await pending();
        return log.info('rotation: pending keyset exists', { token });
      } catch (error) {
        if ((error as Error).name !== 'ResourceNotFoundException') throw error;
      }
      const next = await rotateKeyset(from, now);
      await sm.send(new PutSecretValueCommand({ SecretId, ClientRequestToken: token, SecretString: JSON.stringify(next), VersionStages: [PENDING] }));
      return log.info('rotation: created', { token, kid: signingKeyOf(next)?.kid, keys: next.keys.length });
    }
    case 'setSecret':
      await publishKeys(database, publicKeysOf(await pending()), now);
      return log.info('rotation: published', { token });
    case 'testSecret': {
      const next = signingKeyOf(await pending());
      if (!next) throw new Error('the pending keyset has no signing key');
      const published = (await readPublishedKeys(database, true)) ?? [];
      const signingNow = signingKeyOf(await current());
      for (const key of signingNow ? [next, signingNow] : [next]) await checkPublished(key, published, now);
      return log.info('rotation: tested', { token });
    }
    case 'finishSecret': {
      const from = Object.entries(versions).find(([, s]) => s.includes(CURRENT))?.[0];
      await sm.send(
        new UpdateSecretVersionStageCommand({ SecretId, VersionStage: CURRENT, MoveToVersionId: token, ...(from ? { RemoveFromVersionId: from } : {}) }),
      );
      return log.info('rotation: finished', { token });
    }
    default:
      throw new Error(`unknown rotation step ${Step}`);
  }
};

export const handler = async (event: RotationEvent, context: Context): Promise<void> => {
  log.info('rotation step', { step: event.Step, requestId: context.awsRequestId });
  await rotationStep(secretsManager(), db(), event, new Date());
};
