import { config } from '#lib/core/config.ts';
import { db as sharedDb } from '#lib/db/service.ts';
import { secretString, secretsManager } from './secret-store.ts';
import { isLocal } from './keys/cache.ts';
import { localKeyset } from './keys/local.ts';
import { type Keyset, parseKeyset } from './keys/model.ts';

/**
 * The private keyset (signing keys and second-factor sealing keys): the Secrets Manager secret
 * deployed, DATA_DIR/signing-keys.json locally. Only the functions that sign or seal import this.
 */
export const loadPrivateKeyset = async (purpose: string): Promise<Keyset> => {
  const arn = config.signingKeySecretArn;
  if (arn) return parseKeyset(await secretString(secretsManager(), { SecretId: arn }));
  if (isLocal()) return localKeyset(sharedDb(), config.dataDir, new Date());
  throw new Error(`SIGNING_KEY_SECRET_ARN is not set: this function cannot ${purpose}`);
};
