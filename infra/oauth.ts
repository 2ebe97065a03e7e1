import { CfnOutput } from 'aws-cdk-lib';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import type { Endpoint } from './endpoint.ts';
import { acknowledge } from './nag-acknowledgements.ts';
import type { DeployOptions } from './options.ts';

/**
 * Provider sign-in's part of the stack (docs/sso.md): the settings for every function that takes
 * part in a flow, and the providers' client secrets in a secret of their own, made only when a
 * provider is configured, filled by the operator (each secret comes from its provider's console:
 * `{"google":"…","github":"…"}`) and read by the callback alone.
 */
export const providerSignIn = (scope: Construct, { providers, redirectUrls }: DeployOptions['oauth']) => {
  let secret: Secret | undefined;
  if (providers.length > 0) {
    secret = new Secret(scope, 'OAuthClientSecrets', {
      description: "Roster provider sign-in: each provider's OAuth client secret, by provider id (docs/sso.md)",
      generateSecretString: { secretStringTemplate: '{}', generateStringKey: 'unused', passwordLength: 16, excludePunctuation: true },
    });
    acknowledge('providerSecrets', secret);
    new CfnOutput(scope, 'OAuthClientSecretsArn', {
      value: secret.secretArn,
      description: 'Put the providers\' client secrets here as {"google":"…","github":"…"} (docs/sso.md)',
    });
  }
  return {
    /** The variables of a route's function: none without providers; the secret's ARN (never its value) for `secret`. */
    environment: (use: 'public' | 'secret' | undefined): Record<string, string> =>
      use === undefined || !secret
        ? {}
        : {
            OAUTH_PROVIDERS: JSON.stringify(providers),
            OAUTH_REDIRECT_URLS: redirectUrls.join(','),
            ...(use === 'secret' ? { OAUTH_SECRET_ARN: secret.secretArn } : {}),
          },
    allowSecretRead: (fn: Endpoint): void => {
      if (secret) fn.allowSecretRead(secret);
    },
  };
};
