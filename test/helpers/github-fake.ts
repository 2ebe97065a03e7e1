import { createHash, randomBytes } from 'node:crypto';
import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * GitHub's OAuth and REST endpoints as its documentation describes them, on a loopback port:
 * `GET /login/oauth/authorize` (here it approves at once for the person the test names),
 * `POST /login/oauth/access_token` (JSON with `Accept: application/json`; a refused code is a 200
 * with `error`, as GitHub answers; PKCE S256 checked), `GET /user` and `GET /user/emails` with the
 * token. Enough to show Roster reads who signed in the way GitHub says it.
 */
export interface GithubPerson {
  id: number;
  login: string;
  name: string | null;
  emails: { email: string; primary: boolean; verified: boolean; visibility: 'public' | 'private' | null }[];
}

export interface GithubFake {
  url: string;
  clientId: string;
  clientSecret: string;
  /** Who approves the next authorization. */
  as: (person: GithubPerson) => void;
  /** Follows Roster's redirect to the authorization page: the URL GitHub sends the browser back to. */
  authorize: (authorizationUrl: string) => Promise<string>;
  stop: () => Promise<void>;
}

const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(body));
};

const bodyOf = (req: IncomingMessage): Promise<URLSearchParams> =>
  new Promise((resolve) => {
    let text = '';
    req.on('data', (chunk: Buffer) => (text += chunk.toString()));
    req.on('end', () => resolve(new URLSearchParams(text)));
  });

export const startGithub = async (redirectUri: string): Promise<GithubFake> => {
  const clientId = 'Iv1.rostertest';
  const clientSecret = 'github-client-secret-for-tests';
  let current: GithubPerson | undefined;
  const codes = new Map<string, { person: GithubPerson; challenge: string; redirectUri: string }>();
  const tokens = new Map<string, GithubPerson>();
  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://github.test');
      if (req.method === 'GET' && url.pathname === '/login/oauth/authorize') {
        const q = url.searchParams;
        if (q.get('client_id') !== clientId || q.get('redirect_uri') !== redirectUri || !current)
          return json(res, 400, { error: 'bad request' });
        const code = randomBytes(10).toString('hex');
        codes.set(code, { person: current, challenge: q.get('code_challenge') ?? '', redirectUri });
        const back = new URL(redirectUri);
        back.searchParams.set('code', code);
        back.searchParams.set('state', q.get('state') ?? '');
        res.writeHead(302, { location: back.toString() });
        return res.end();
      }
      if (req.method === 'POST' && url.pathname === '/login/oauth/access_token') {
        const form = await bodyOf(req);
        const basic = req.headers.authorization?.startsWith('Basic ')
          ? Buffer.from(req.headers.authorization.slice(6), 'base64').toString().split(':').map(decodeURIComponent)
          : [form.get('client_id'), form.get('client_secret')];
        if (basic[0] !== clientId || basic[1] !== clientSecret) return json(res, 200, { error: 'incorrect_client_credentials' });
        const grant = codes.get(form.get('code') ?? '');
        codes.delete(form.get('code') ?? '');
        const verifier = form.get('code_verifier') ?? '';
        if (!grant || grant.redirectUri !== form.get('redirect_uri'))
          return json(res, 200, { error: 'bad_verification_code', error_description: 'The code passed is incorrect or expired.' });
        if (createHash('sha256').update(verifier).digest('base64url') !== grant.challenge)
          return json(res, 200, { error: 'bad_verification_code', error_description: 'The code_verifier does not match.' });
        const token = `gho_${randomBytes(18).toString('hex')}`;
        tokens.set(token, grant.person);
        return json(res, 200, { access_token: token, token_type: 'bearer', scope: 'read:user,user:email' });
      }
      const person = tokens.get(req.headers.authorization?.replace(/^Bearer /, '') ?? '');
      if (!person) return json(res, 401, { message: 'Requires authentication' });
      if (req.method === 'GET' && url.pathname === '/user')
        return json(res, 200, { id: person.id, login: person.login, name: person.name });
      if (req.method === 'GET' && url.pathname === '/user/emails') return json(res, 200, person.emails);
      return json(res, 404, { message: 'Not Found' });
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: base,
    clientId,
    clientSecret,
    as: (person) => {
      current = person;
    },
    authorize: async (authorizationUrl) => {
      const res = await fetch(authorizationUrl, { redirect: 'manual' });
      const location = res.headers.get('location');
      if (res.status !== 302 || !location) throw new Error(`GitHub answered ${res.status}: ${await res.text()}`);
      return location;
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
};
