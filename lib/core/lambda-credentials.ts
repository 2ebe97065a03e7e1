import { fromEnv } from '@aws-sdk/credential-provider-env';

/**
 * Stands in for `@aws-sdk/credential-provider-node` in the Lambda bundles (infra/endpoint.ts,
 * esbuild `alias`). Lambda hands every function its role's credentials in environment variables,
 * so the default chain's other sources (SSO, INI files, processes, web identity, instance
 * metadata) and the STS and SSO clients they carry are never used there, yet weigh a third of
 * each bundle. Local runs and tests import the SDK's own chain.
 */
export const defaultProvider = (init: Parameters<typeof fromEnv>[0] = {}) => fromEnv(init);
