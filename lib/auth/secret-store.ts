import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { config } from '#lib/core/config.ts';

/**
 * The private signing keys' store when deployed: Secrets Manager. Its own module, imported only
 * by the code that signs (signing.ts) and the rotation function, so no other bundle carries the
 * client.
 */
let secretsClient: SecretsManagerClient | undefined;
/** Timeouts and attempts like the DynamoDB client: a hung Secrets Manager is a 503, not a gateway timeout. */
export const secretsManager = (): SecretsManagerClient =>
  (secretsClient ??= new SecretsManagerClient({
    region: config.region,
    maxAttempts: 3,
    requestHandler: new NodeHttpHandler({ connectionTimeout: 1000, requestTimeout: 2000, throwOnRequestTimeout: true }),
  }));

/** The string value of one version of a secret (AWSCURRENT unless asked otherwise). */
export const secretString = async (sm: SecretsManagerClient, input: { SecretId: string; VersionId?: string; VersionStage?: string }) => {
  const { SecretString } = await sm.send(new GetSecretValueCommand(input));
  if (!SecretString) throw new Error('the signing key secret has no string value');
  return SecretString;
};
