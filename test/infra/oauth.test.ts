import { describe, expect, it } from 'vitest';
import { ROUTES } from '#lib/http/routes.ts';
import { actionsOf, synth } from './template.ts';

/** Provider sign-in's infrastructure (docs/sso.md): settings where they are used, the client secrets in a secret only the callback reads. */
const GOOGLE = { id: 'google', type: 'oidc', issuer: 'https://accounts.google.com', clientId: 'roster.apps.googleusercontent.com' };
const GITHUB = { id: 'github', type: 'github', clientId: 'Iv1.roster' };
const APP = 'https://app.example.com/auth/callback';

const OAUTH_ROUTES = ROUTES.filter((r) => 'oauth' in r).map((r) => r.name);

describe('provider sign-in in the stack', () => {
  it('makes no secret and sets nothing while no provider is configured', () => {
    const { ofType, variables } = synth();
    expect(ofType('AWS::SecretsManager::Secret').filter(([id]) => id.includes('OAuth'))).toEqual([]);
    for (const name of OAUTH_ROUTES) expect(variables(name), name).not.toHaveProperty('OAUTH_PROVIDERS');
  });

  it('gives the providers and redirect URLs to the functions of the flow, and the secret to the callback alone', () => {
    const built = synth({ oauthProviders: JSON.stringify([GOOGLE, GITHUB]), oauthRedirectUrls: `${APP}, http://localhost:5173/cb` });
    const secrets = built.ofType('AWS::SecretsManager::Secret').filter(([id]) => id.includes('OAuthClientSecrets'));
    expect(secrets).toHaveLength(1);
    const [secretId] = secrets[0] as [string, unknown];
    expect(OAUTH_ROUTES.sort()).toEqual([
      'auth-identities-link',
      'auth-oauth-authorize',
      'auth-oauth-callback',
      'gotrue-authorize',
      'gotrue-identities-authorize',
      'gotrue-settings',
    ]);
    for (const name of OAUTH_ROUTES) {
      const env = built.variables(name);
      expect(JSON.parse(env.OAUTH_PROVIDERS as string), name).toEqual([
        { ...GOOGLE, scopes: 'openid email profile' },
        {
          ...GITHUB,
          scopes: 'read:user user:email',
          authorizationUrl: 'https://github.com/login/oauth/authorize',
          tokenUrl: 'https://github.com/login/oauth/access_token',
          apiUrl: 'https://api.github.com',
        },
      ]);
      expect(env.OAUTH_REDIRECT_URLS, name).toBe(`${APP},http://localhost:5173/cb`);
      // The flow's own functions name the callback URL; the settings only list the providers.
      if (name !== 'gotrue-settings') expect(env, name).toHaveProperty('PUBLIC_URL');
      // The ARN, never a secret value (OAUTH_CLIENT_SECRETS is the local mode's only).
      expect(env.OAUTH_SECRET_ARN !== undefined, name).toBe(name === 'auth-oauth-callback');
      expect(env, name).not.toHaveProperty('OAUTH_CLIENT_SECRETS');
    }
    const readers = ROUTES.map((r) => r.name).filter((name) =>
      built.statementsOf(name).some((s) => JSON.stringify(s.Resource).includes(secretId)),
    );
    expect(readers).toEqual(['auth-oauth-callback']);
    const onSecret = built.statementsOf('auth-oauth-callback').filter((s) => JSON.stringify(s.Resource).includes(secretId));
    expect(onSecret.flatMap(actionsOf)).toEqual(['secretsmanager:GetSecretValue']);
  });

  it('refuses a malformed provider list or redirect URL at synth, in one sentence', () => {
    expect(() => synth({ oauthProviders: 'not json' })).toThrow(/oauthProviders must be a JSON array/);
    expect(() => synth({ oauthProviders: JSON.stringify([{ ...GOOGLE, clientSecret: 'oops' }]), oauthRedirectUrls: APP })).toThrow(
      /context oauthProviders/,
    );
    expect(() => synth({ oauthProviders: JSON.stringify([GOOGLE, GOOGLE]), oauthRedirectUrls: APP })).toThrow(/each provider id once/);
    expect(() => synth({ oauthProviders: JSON.stringify([{ ...GOOGLE, id: 'email' }]), oauthRedirectUrls: APP })).toThrow(
      /password sign-in/,
    );
    expect(() => synth({ oauthProviders: JSON.stringify([GOOGLE]) })).toThrow(/oauthRedirectUrls must list at least one/);
    expect(() => synth({ oauthProviders: JSON.stringify([GOOGLE]), oauthRedirectUrls: 'http://app.example.com/cb' })).toThrow(
      /https URLs \(http only on localhost\)/,
    );
    expect(() => synth({ oauthProviders: JSON.stringify([GOOGLE]), oauthRedirectUrls: `${APP}#x` })).toThrow(
      /without credentials or fragment/,
    );
  });
});
