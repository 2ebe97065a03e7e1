import { afterAll, describe, expect, it } from 'vitest';
import { signUp, useApi } from '../helpers/api.ts';
import { APP_URL, CALLBACK, PUBLIC_URL, resetThroughMailbox, throughProvider, trade } from '../helpers/oauth.ts';
import { type GithubPerson, startGithub } from '../helpers/github-fake.ts';

// GitHub's documented OAuth and REST endpoints on loopback (test/helpers/github-fake.ts), configured
// as GitHub Enterprise Server would be: by its URLs.
const github = await startGithub(CALLBACK);
process.env.PUBLIC_URL = PUBLIC_URL;
process.env.OAUTH_REDIRECT_URLS = APP_URL;
process.env.OAUTH_PROVIDERS = JSON.stringify([
  {
    id: 'github',
    type: 'github',
    clientId: github.clientId,
    authorizationUrl: `${github.url}/login/oauth/authorize`,
    tokenUrl: `${github.url}/login/oauth/access_token`,
    apiUrl: github.url,
  },
]);
process.env.OAUTH_CLIENT_SECRETS = JSON.stringify({ github: github.clientSecret });
afterAll(() => github.stop());

const api = useApi();
let ids = 1000;
const octocat = (emails: GithubPerson['emails'], name: string | null = 'Mona Lisa Octocat'): GithubPerson => ({
  id: ++ids,
  login: `octo${ids}`,
  name,
  emails,
});
const address = (name: string) => `${name}-${Date.now().toString(36)}-${++ids}@example.com`;

const viaGithub = (person: GithubPerson, options: { gotrue?: boolean } = {}) => {
  github.as(person);
  return throughProvider(api, 'github', (url) => github.authorize(url), options);
};

describe('GitHub sign-in', () => {
  it('signs in with the primary verified address, its numeric id as the identity, the name split', async () => {
    const email = address('mona');
    const person = octocat([
      { email: address('other'), primary: false, verified: true, visibility: null },
      { email, primary: true, verified: true, visibility: 'private' },
    ]);
    const { query, verifier } = await viaGithub(person);
    const res = await trade(api, query.code as string, verifier);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const user = res.body.data.session.user;
    expect(user.email).toBe(email);
    expect(user.app_metadata).toEqual({ provider: 'github', providers: ['github'] });
    expect(user.identities[0]).toMatchObject({ provider: 'github', id: String(person.id) });
    expect(user.user_metadata).toMatchObject({ firstName: 'Mona', lastName: 'Lisa Octocat' });
  });

  it('refuses a primary address GitHub has not verified, even with a verified secondary one', async () => {
    const person = octocat([
      { email: address('unverified'), primary: true, verified: false, visibility: null },
      { email: address('verified'), primary: false, verified: true, visibility: null },
    ]);
    const { query } = await viaGithub(person);
    expect(query).toMatchObject({ error: 'access_denied', error_code: 'provider_email_needs_verification' });
  });

  it('links to the confirmed account of the same address (its password reset through the mailbox), through the GoTrue start as well', async () => {
    const owner = await signUp(api, 'gh-owner');
    await resetThroughMailbox(api, owner, 'a passphrase from the mailbox');
    const { query, verifier } = await viaGithub(octocat([{ email: owner.email, primary: true, verified: true, visibility: null }], null), {
      gotrue: true,
    });
    const res = await api.call('POST', '/auth/v1/token?grant_type=pkce', { json: { auth_code: query.code, code_verifier: verifier } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.user.id).toBe(owner.uuid);
    expect(res.body.user.app_metadata.providers).toEqual(['email', 'github']);
  });

  it("refuses GitHub's refusal of a code (a 200 with error, as GitHub answers)", async () => {
    const person = octocat([{ email: address('refused'), primary: true, verified: true, visibility: null }]);
    github.as(person);
    const { query } = await throughProvider(api, 'github', async (url) => {
      const back = new URL(await github.authorize(url));
      back.searchParams.set('code', 'not-a-code-github-issued');
      return back.toString();
    });
    expect(query).toMatchObject({ error: 'server_error', error_code: 'bad_oauth_callback' });
  });
});
