import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider, { type Configuration } from 'oidc-provider';

/**
 * A real OpenID provider (panva's oidc-provider, OpenID Certified) on a loopback port, standing
 * in for Google or a company's identity provider. Its people are whatever the test puts in
 * `people`; `signIn` walks its own login and consent pages as a person would (the dev
 * interactions: any password), so everything Roster sees is the provider's own doing.
 */
export interface Person {
  email: string;
  email_verified: boolean;
  given_name?: string;
  family_name?: string;
}

export interface Idp {
  issuer: string;
  clientId: string;
  clientSecret: string;
  people: Map<string, Person>;
  /** Signs `subject` in at `authorizationUrl` and answers the URL the provider sends the browser back to. */
  signIn: (authorizationUrl: string, subject: string) => Promise<string>;
  /** Answers where the provider sends the browser when the person cancels. */
  cancel: (authorizationUrl: string) => Promise<string>;
  stop: () => Promise<void>;
}

export interface IdpOptions {
  /** Roster's callback URL, as registered with the provider. */
  redirectUri: string;
  clientId?: string;
  clientSecret?: string;
  /** Put the e-mail claims in the ID token (as Google does) rather than only in userinfo. */
  emailInIdToken?: boolean;
  /** Seconds an ID token lives. */
  idTokenTtl?: number;
  /** Anyone not in `people` signs in too, with a verified address: the subject itself when it is one (the benchmark's accounts). */
  anyone?: boolean;
}

/** Cookies as a browser keeps them for one site, enough for the provider's pages. */
class Jar {
  private readonly cookies = new Map<string, string>();
  take(response: Response) {
    for (const line of response.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const at = pair.indexOf('=');
      const [name, value] = [pair.slice(0, at).trim(), pair.slice(at + 1).trim()];
      if (/expires=Thu, 01 Jan 1970/i.test(line) || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }
  header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }
}

/** Follows the provider's redirects, answering its pages with `answer`, until it sends the browser away from `issuer`. */
type Step = { post: Record<string, string> } | { get: string } | undefined;
const walk = async (issuer: string, start: string, answer: (page: string, url: string) => Step): Promise<string> => {
  const jar = new Jar();
  let url = start;
  let form: Record<string, string> | undefined;
  for (let step = 0; step < 20; step++) {
    if (!url.startsWith(issuer)) return url;
    const response = await fetch(url, {
      method: form ? 'POST' : 'GET',
      redirect: 'manual',
      headers: { cookie: jar.header(), ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
      ...(form ? { body: new URLSearchParams(form).toString() } : {}),
    });
    jar.take(response);
    const location = response.headers.get('location');
    if (location) {
      url = new URL(location, url).toString();
      form = undefined;
      continue;
    }
    const page = await response.text();
    const next = answer(page, url);
    if (!next) throw new Error(`the provider answered ${response.status} at ${url}: ${page.slice(0, 300)}`);
    if ('get' in next) {
      url = next.get;
      continue;
    }
    form = next.post;
    const action = /<form[^>]*action="([^"]+)"/.exec(page)?.[1];
    if (action) url = new URL(action.replaceAll('&amp;', '&'), url).toString();
  }
  throw new Error('the provider kept the browser for more than 20 steps');
};

/**
 * Signs `subject` in at the provider `issuer` (oidc-provider's own login and consent pages) from
 * `authorizationUrl`, and answers the URL the provider sends the browser back to.
 */
export const signInAt = (issuer: string, authorizationUrl: string, subject: string): Promise<string> =>
  walk(issuer, authorizationUrl, (page): Step => {
    if (page.includes('name="prompt" value="login"')) return { post: { prompt: 'login', login: subject, password: 'any' } };
    if (page.includes('name="prompt" value="consent"')) return { post: { prompt: 'consent' } };
    return undefined;
  });

export const startIdp = async (options: IdpOptions): Promise<Idp> => {
  const people = new Map<string, Person>();
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clientId = options.clientId ?? 'roster';
  const clientSecret = options.clientSecret ?? 'roster-client-secret-that-is-long-enough';
  const configuration: Configuration = {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [options.redirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_post',
      },
    ],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['given_name', 'family_name', 'name'] },
    conformIdTokenClaims: options.emailInIdToken !== true,
    findAccount: (_ctx, sub) => {
      const person =
        people.get(sub) ??
        (options.anyone ? { email: sub.includes('@') ? sub : `${sub}@example.com`, email_verified: true, given_name: 'Bench' } : undefined);
      return person ? { accountId: sub, claims: () => ({ sub, ...person }) } : undefined;
    },
    cookies: { keys: ['roster-test-idp-cookie-key'] },
    ttl: { IdToken: options.idTokenTtl ?? 3600 },
    features: { devInteractions: { enabled: true } },
  };
  const provider = new Provider(issuer, configuration);
  server.on('request', provider.callback());

  return {
    issuer,
    clientId,
    clientSecret,
    people,
    signIn: (authorizationUrl, subject) => signInAt(issuer, authorizationUrl, subject),
    cancel: (authorizationUrl) =>
      walk(issuer, authorizationUrl, (page, url) => {
        const abort = /href="([^"]*\/abort)"/.exec(page)?.[1];
        return abort ? { get: new URL(abort, url).toString() } : undefined;
      }),
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
};
