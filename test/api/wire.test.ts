import { beforeAll, describe, expect, it } from 'vitest';
import { ROUTES } from '#lib/http/routes.ts';
import { type Reply, type TestUser, addMember, createTeam, freshEmail, freshSlug, signUp, useApi } from '../helpers/api.ts';

const api = useApi();

const expectEnvelope = (res: Reply, status: number, code: string) => {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
  expect(res.body).toEqual({
    error: { code, message: expect.any(String), ...(res.body?.error?.fields ? { fields: expect.any(Object) } : {}) },
  });
};

describe('routing', () => {
  it.each(['/api/v1/teams', '/api/admin', '/swagger', '/.env', '/metrics', '/', '/api/teams/a/b/c/d'])(
    'answers %s with 404 in the envelope',
    async (path) => {
      expectEnvelope(await api.call('GET', path), 404, 'not_found');
    },
  );

  it('answers a known path with another method with 405 and Allow', async () => {
    const res = await api.call('PATCH', '/api/teams/acme');
    expectEnvelope(res, 405, 'method_not_allowed');
    expect(res.headers.get('allow')).toBe('GET, PUT, DELETE');
    const override = await api.call('GET', '/api/auth/signup', { headers: { 'x-http-method-override': 'POST' } });
    expectEnvelope(override, 405, 'method_not_allowed');
    expect(override.headers.get('allow')).toBe('POST');
    // The pages are routes like any other: their paths answer another method in the envelope too.
    const page = await api.call('POST', '/verify');
    expectEnvelope(page, 405, 'method_not_allowed');
    expect(page.headers.get('allow')).toBe('GET');
  });

  it("asks every route but sign-up, sign-in, refresh, the mailed links' (verify, recover, reset, unsubscribe), the JWKS and discovery documents, the documentation and the pages for a token (401 with WWW-Authenticate)", async () => {
    for (const route of ROUTES.filter((r) => r.auth)) {
      const path = route.path
        .replace('{slug}', 'acme')
        .replace('{memberId}', '1')
        .replace('{id}', '1')
        .replace('{uuid}', '00000000-0000-4000-8000-000000000000')
        .replace('{sessionId}', '00000000-0000-4000-8000-000000000000')
        .replace('{identityId}', '00000000-0000-4000-8000-000000000000')
        .replace('{domain}', 'example.com');
      const res = await api.call(route.method, path, route.body ? { json: {} } : {});
      if ('dialect' in route) {
        // The Supabase-compatible routes refuse as GoTrue does (docs/supabase.md).
        expect([res.status, res.body.code], route.name).toEqual([403, 'bad_jwt']);
        continue;
      }
      expectEnvelope(res, 401, 'unauthorized');
      expect(res.headers.get('www-authenticate'), route.name).toMatch(/^Token/);
    }
    expect(ROUTES.filter((r) => !r.auth).map((r) => r.name)).toEqual([
      'auth-signup',
      'auth-signin',
      'auth-oauth-authorize',
      'auth-oauth-token',
      'auth-refresh',
      'auth-verify',
      'auth-recover',
      'auth-reset',
      'auth-passkeys-challenge',
      'auth-passkeys-sign-in',
      'jwks',
      'openid-configuration',
      'openapi',
      'docs',
      'docs-assets',
      'gotrue-signup',
      'gotrue-token',
      'gotrue-authorize',
      'auth-oauth-callback',
      'gotrue-recover',
      'gotrue-resend',
      'gotrue-verify',
      'gotrue-jwks',
      'gotrue-settings',
      'page-invite',
      'page-verify',
      'page-reset',
      'page-unsubscribe',
      'unsubscribe',
      'page-security',
      'page-security-action',
      'page-assets',
    ]);
  });

  it('answers the other routes without a token: never 401, never WWW-Authenticate', async () => {
    for (const route of ROUTES.filter((r) => !r.auth)) {
      const path = route.path
        .replace('{uuid}', '00000000-0000-4000-8000-000000000000')
        .replace('{provider}', 'google')
        .replace('{asset}', route.name === 'docs-assets' ? 'start.js' : 'page.css');
      const res = await api.call(route.method, path, route.body ? { json: {} } : {});
      expect(res.status, route.name).not.toBe(401);
      expect(res.headers.get('www-authenticate'), route.name).toBeNull();
    }
  });
});

describe('request bodies', () => {
  const post = (options: Parameters<typeof api.call>[2]) => api.call('POST', '/api/auth/signin', options);

  it.each(['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml'])(
    'refuses a %s body with 415',
    async (type) =>
      expectEnvelope(
        await post({ raw: '{"email":"a@b.co","password":"x"}', headers: { 'content-type': type } }),
        415,
        'unsupported_media_type',
      ),
  );

  it('takes JSON with or without a charset, +json types, and no content type at all', async () => {
    for (const headers of [
      { 'content-type': 'application/json; charset=utf-8' },
      { 'content-type': 'application/merge-patch+json' },
      {},
    ] as Record<string, string>[]) {
      // A Buffer body, because fetch labels a string body text/plain on its own.
      const res = await post({ raw: Buffer.from(JSON.stringify({ email: freshEmail(), password: 'wrong password' })), headers });
      expect(res.status).toBe(401);
    }
  });

  it.each(['{', '{"email":', 'nul', '{"a":1}}', "{'a':1}"])('refuses malformed JSON %j with 400 invalid_json', async (raw) => {
    expectEnvelope(await post({ raw, headers: { 'content-type': 'application/json' } }), 400, 'invalid_json');
  });

  it.each(['[]', '"text"', '42', 'null', 'true'])('refuses the non-object body %s with 400 invalid_body', async (raw) => {
    expectEnvelope(await post({ raw, headers: { 'content-type': 'application/json' } }), 400, 'invalid_body');
  });

  it('refuses a field of the wrong JSON type with 400 invalid_body naming it', async () => {
    const res = await post({ json: { email: ['a@b.co'], password: 123 } });
    expectEnvelope(res, 400, 'invalid_body');
    expect(Object.keys(res.body.error.fields).sort()).toEqual(['email', 'password']);
  });

  it('counts an empty body as {} and names the missing fields (422)', async () => {
    const res = await post({ raw: '', headers: { 'content-type': 'application/json' } });
    expectEnvelope(res, 422, 'validation_failed');
    expect(res.body.error.fields).toEqual({ email: 'is required', password: 'is required' });
  });

  it('refuses bodies over 64 KiB with 413, and takes one of exactly 64 KiB', async () => {
    const pad = (size: number) => {
      const base = JSON.stringify({ email: freshEmail(), password: 'wrong password', pad: '' });
      return base.replace('"pad":""', `"pad":"${'x'.repeat(size - base.length)}"`);
    };
    expect(Buffer.byteLength(pad(65_536))).toBe(65_536);
    expect((await post({ raw: pad(65_536), headers: { 'content-type': 'application/json' } })).status).toBe(401);
    expectEnvelope(await post({ raw: pad(65_537), headers: { 'content-type': 'application/json' } }), 413, 'body_too_large');
    expectEnvelope(
      await post({ raw: 'x'.repeat(5 * 1024 * 1024), headers: { 'content-type': 'application/json' } }),
      413,
      'body_too_large',
    );
  });

  it('ignores unknown fields', async () => {
    const user = await signUp(api);
    const res = await post({ json: { email: user.email, password: user.password, admin: true, role: 'OWNER' } });
    expect(res.status).toBe(200);
  });
});

describe('body encoding', () => {
  let owner: TestUser;
  beforeAll(async () => {
    owner = await signUp(api);
  });

  /** A team-creation body with `bytes` inside the name, sent as given. */
  const createWith = (bytes: number[], headers: Record<string, string>, token = owner.token) => {
    const slug = freshSlug('enc');
    const body = Buffer.concat([Buffer.from(`{"name":"A`), Buffer.from(bytes), Buffer.from(`","slug":"${slug}"}`)]);
    return { slug, res: api.call('POST', '/api/teams', { token, raw: body, headers }) };
  };

  it.each([
    ['a stray byte', [0xff]],
    ['a truncated sequence', [0xe2, 0x82]],
    ['an overlong "/"', [0xc0, 0xaf]],
    ['an encoded surrogate', [0xed, 0xa0, 0x80]],
  ])('refuses invalid UTF-8 (%s) with 400 invalid_json, never U+FFFD, and writes nothing', async (_, bytes) => {
    for (const headers of [{ 'content-type': 'application/json' }, {}] as Record<string, string>[]) {
      const { slug, res } = createWith(bytes, headers);
      expectEnvelope(await res, 400, 'invalid_json');
      expectEnvelope(await api.call('GET', `/api/teams/${slug}`, { token: owner.token }), 404, 'not_found');
    }
  });

  it('answers an anonymous caller 401 before judging the bytes of its body', async () => {
    expectEnvelope(await createWith([0xff], { 'content-type': 'application/json' }, '').res, 401, 'unauthorized');
  });

  it.each([
    'application/json; charset=latin1',
    'application/json; charset=ISO-8859-1',
    'application/json;charset="utf-16"',
    'application/merge-patch+json; charset=us-ascii',
  ])('refuses %s with 415, before authentication', async (type) => {
    const { slug, res } = createWith([], { 'content-type': type });
    expectEnvelope(await res, 415, 'unsupported_media_type');
    expectEnvelope(await createWith([], { 'content-type': type }, '').res, 415, 'unsupported_media_type');
    expectEnvelope(await api.call('GET', `/api/teams/${slug}`, { token: owner.token }), 404, 'not_found');
  });

  it.each([
    'application/json; charset=UTF-8',
    'application/json; charset=utf-8',
    'application/json;charset="Utf-8"',
    'application/json; Charset=UTF-8; profile=x',
    undefined,
  ])('takes UTF-8 declared as %s (or no type at all) and stores it as sent', async (type) => {
    const { slug, res } = createWith([...Buffer.from('ü€😀')], type === undefined ? {} : { 'content-type': type });
    expect((await res).status).toBe(201);
    const team = await api.call('GET', `/api/teams/${slug}`, { token: owner.token });
    expect(team.body.data.name).toBe('Aü€😀');
  });
});

describe('response headers', () => {
  it('sends JSON, nosniff, no-store and a request id on successes and errors alike', async () => {
    const user = await signUp(api);
    for (const res of [
      await api.call('GET', '/api/teams', { token: user.token }),
      await api.call('GET', '/nowhere'),
      await api.call('GET', '/api/teams'),
    ]) {
      expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(res.headers.get('x-request-id')).toBeTruthy();
      expect(res.headers.get('x-powered-by')).toBeNull();
    }
  });
});

describe('pagination', () => {
  const walk = async (user: TestUser, first: string) => {
    const seen: number[] = [];
    let next: string | null = first;
    let pages = 0;
    while (next) {
      const url = new URL(next, api.url);
      const res = await api.call('GET', `${url.pathname}${url.search}`, { token: user.token });
      expect(res.status).toBe(200);
      expect(Object.keys(res.body)).toEqual(['data']);
      seen.push(...res.body.data.map((item: { id: number }) => item.id));
      const link = res.headers.get('link');
      next = link ? (/^<([^>]+)>; rel="next"$/.exec(link)?.[1] ?? null) : null;
      if (link) expect(next).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\//);
      pages++;
    }
    return { seen, pages };
  };

  it('pages members, team invites, my invites and my teams with limit, cursor and Link', async () => {
    const owner = await signUp(api);
    const { slug } = await createTeam(api, owner);
    const members = await Promise.all([1, 2, 3, 4].map(() => signUp(api)));
    for (const m of members) await addMember(api, slug, owner, m, 'MEMBER');
    const guest = await signUp(api);
    for (let i = 0; i < 5; i++) {
      const team = await createTeam(api, owner);
      await api.call('POST', `/api/teams/${team.slug}/invites`, { token: owner.token, json: { email: guest.email, role: 'MEMBER' } });
    }
    for (let i = 0; i < 5; i++) {
      await api.call('POST', `/api/teams/${slug}/invites`, { token: owner.token, json: { email: freshEmail(), role: 'MEMBER' } });
    }

    const all = async (path: string, user: TestUser) =>
      (await api.call('GET', `${path}?limit=1000`, { token: user.token })).body.data.map((x: { id: number }) => x.id);
    for (const [path, user, count] of [
      [`/api/teams/${slug}/members`, owner, 5],
      [`/api/teams/${slug}/invites`, owner, 5],
      ['/api/invites', guest, 5],
      ['/api/teams', owner, 6],
    ] as const) {
      const everything = await all(path, user);
      expect(everything).toHaveLength(count);
      const { seen, pages } = await walk(user, `${path}?limit=2`);
      expect(seen, path).toEqual(everything);
      expect(pages).toBe(Math.ceil(count / 2));
      // An exact fit has no next page.
      const exact = await api.call('GET', `${path}?limit=${count}`, { token: user.token });
      expect(exact.headers.get('link')).toBeNull();
    }
  });

  it.each(['0', '-1', '1001', '1e9', 'abc', '1.5', '1,1000'])('refuses limit=%s with 422', async (limit) => {
    const user = await signUp(api);
    const res = await api.call('GET', `/api/teams?limit=${encodeURIComponent(limit)}`, { token: user.token });
    expectEnvelope(res, 422, 'validation_failed');
    expect(res.body.error.fields.limit).toBeDefined();
  });

  it('refuses a forged or foreign cursor with 422, never 500', async () => {
    const owner = await signUp(api);
    const a = await createTeam(api, owner);
    const b = await createTeam(api, owner);
    for (const team of [a, b]) {
      for (const m of [await signUp(api), await signUp(api)]) await addMember(api, team.slug, owner, m, 'MEMBER');
    }
    // Cursors are sealed (lib/db/cursors.ts): a foreign one is a real cursor of another team's list.
    const cursorOf = async (slug: string) => {
      const page = await api.call('GET', `/api/teams/${slug}/members?limit=1`, { token: owner.token });
      return new URL(/<([^>]+)>/.exec(page.headers.get('link') as string)?.[1] as string).searchParams.get('cursor') as string;
    };
    const foreign = await cursorOf(b.slug);
    expect((await api.call('GET', `/api/teams/${b.slug}/members?cursor=${foreign}`, { token: owner.token })).status).toBe(200);
    for (const bad of [foreign, 'bm90LWpzb24', Buffer.from('{"pk":1}').toString('base64url'), 'x'.repeat(3000), '%%%']) {
      const res = await api.call('GET', `/api/teams/${a.slug}/members?cursor=${encodeURIComponent(bad)}`, { token: owner.token });
      expect(res.status, bad.slice(0, 20)).toBe(422);
      expect(res.body.error.fields.cursor).toBeDefined();
    }
    // The page is read before the membership (their items share one request), but a caller who
    // is not a member still learns nothing: 404 comes first, whatever the cursor.
    const stranger = await signUp(api);
    for (const list of ['members', 'invites']) {
      const res = await api.call('GET', `/api/teams/${a.slug}/${list}?cursor=${encodeURIComponent(foreign)}`, { token: stranger.token });
      expectEnvelope(res, 404, 'not_found');
    }
  });
});
