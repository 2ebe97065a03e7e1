import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { config } from '../config.ts';
import { AppError } from '../errors.ts';
import { log } from '../log.ts';

/**
 * The HS256 key that signs access tokens. Deployed, it is a Secrets Manager secret whose ARN is
 * in SIGNING_KEY_SECRET_ARN; locally, a random key generated once into DATA_DIR. There is never a
 * built-in fallback key: without one, every authenticated request fails.
 */
const MIN_KEY_BYTES = 32;

const fromSecretsManager = async (arn: string): Promise<Uint8Array> => {
  const client = new SecretsManagerClient({ region: config.region });
  const { SecretString } = await client.send(new GetSecretValueCommand({ SecretId: arn }));
  if (!SecretString) throw new Error('signing key secret is empty');
  return new TextEncoder().encode(SecretString);
};

const fromDataDir = async (dir: string): Promise<Uint8Array> => {
  const file = join(dir, 'signing-key');
  try {
    return new TextEncoder().encode((await readFile(file, 'utf8')).trim());
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    await mkdir(dir, { recursive: true });
    const key = randomBytes(48).toString('base64url');
    // 'wx' fails if another process wrote the file first; then read the winner's key.
    await writeFile(file, key, { mode: 0o600, flag: 'wx' }).catch((e: NodeJS.ErrnoException) => {
      if (e.code !== 'EEXIST') throw e;
    });
    return new TextEncoder().encode((await readFile(file, 'utf8')).trim());
  }
};

let cached: Promise<Uint8Array> | undefined;

export const signingKey = (): Promise<Uint8Array> => {
  cached ??= (config.signingKeySecretArn ? fromSecretsManager(config.signingKeySecretArn) : fromDataDir(config.dataDir))
    .then((key) => {
      if (key.length < MIN_KEY_BYTES) throw new Error(`signing key must be at least ${MIN_KEY_BYTES} bytes`);
      return key;
    })
    .catch((error: unknown) => {
      cached = undefined; // do not cache a failure: the next invocation tries again
      log.error('signing key unavailable', error);
      throw new AppError('unavailable', undefined, { headers: { 'Retry-After': '5' } });
    });
  return cached;
};
