import { describe, expect, it } from 'vitest';
import { freshEmail, signUp, useApi } from '../helpers/api.ts';

const api = useApi();

const MILLIS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const MICROS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

/** A session's body; `confirmed`: the address was confirmed (a timestamp), else null. */
const expectSession = (session: Record<string, unknown>, email: string, confirmed: boolean) => {
  const now = Math.floor(Date.now() / 1000);
  expect(Object.keys(session).sort()).toEqual(['access_token', 'expires_at', 'expires_in', 'refresh_token', 'token_type', 'user']);
  expect(session.access_token).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
  expect(session.token_type).toBe('bearer');
  expect(session.expires_in).toBe(3600);
  expect(Math.abs((session.expires_at as number) - (now + 3600))).toBeLessThan(10);
  // 32 random bytes, base64url: 256 bits, not UUID-shaped.
  expect(session.refresh_token).toMatch(/^[\w-]{43}$/);
  expect(session.user).toEqual({
    id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
    aud: 'authenticated',
    role: 'authenticated',
    email,
    email_confirmed_at: confirmed ? expect.stringMatching(MILLIS) : null,
    confirmed_at: confirmed ? expect.stringMatching(MILLIS) : null,
    last_sign_in_at: expect.stringMatching(MICROS),
    app_metadata: { provider: 'email', providers: ['email'] },
    user_metadata: { firstName: expect.any(String), lastName: expect.any(String) },
    created_at: expect.stringMatching(MILLIS),
    updated_at: expect.stringMatching(MILLIS),
  });
};

describe('POST /api/auth/signup', () => {
  it('creates the account and its first session (201), e-mail trimmed and lowercased', async () => {
    const email = freshEmail('Signup');
    const res = await api.call('POST', '/api/auth/signup', {
      json: { email: `  ${email.toUpperCase()} `, password: 'a long enough secret', firstName: ' Ada ', lastName: 'Lovelace' },
    });
    expect(res.status).toBe(201);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expectSession(res.body.data.session, email.toLowerCase(), false);
    expect(res.body.data.session.user.user_metadata).toEqual({ firstName: 'Ada', lastName: 'Lovelace' });
  });

  it('refuses a taken e-mail in any case with 409 email_taken', async () => {
    const user = await signUp(api);
    const res = await api.call('POST', '/api/auth/signup', {
      json: { email: user.email.toUpperCase(), password: 'another good password', firstName: 'A', lastName: 'B' },
    });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('email_taken');
  });

  it('reports every missing or invalid field (422 with fields)', async () => {
    const res = await api.call('POST', '/api/auth/signup', { json: { email: 'not-an-email', password: 'short' } });
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('validation_failed');
    expect(Object.keys(res.body.error.fields).sort()).toEqual(['email', 'firstName', 'lastName', 'password']);
  });

  it('takes passwords of 8 to 256 characters', async () => {
    const body = (password: string) => ({ email: freshEmail(), password, firstName: 'A', lastName: 'B' });
    expect((await api.call('POST', '/api/auth/signup', { json: body('x'.repeat(7)) })).status).toBe(422);
    expect((await api.call('POST', '/api/auth/signup', { json: body('x'.repeat(8)) })).status).toBe(201);
    expect((await api.call('POST', '/api/auth/signup', { json: body('x'.repeat(256)) })).status).toBe(201);
    expect((await api.call('POST', '/api/auth/signup', { json: body('x'.repeat(257)) })).status).toBe(422);
  });
});

describe('POST /api/auth/signin', () => {
  it('opens a new session for the right password, whatever the e-mail case or spaces', async () => {
    const user = await signUp(api);
    const res = await api.call('POST', '/api/auth/signin', { json: { email: ` ${user.email.toUpperCase()}`, password: user.password } });
    expect(res.status).toBe(200);
    expectSession(res.body.data.session, user.email, true);
    expect(res.body.data.session.access_token).not.toBe(user.token);
    expect(res.body.data.session.refresh_token).not.toBe(user.refreshToken);
  });

  it('answers an unknown e-mail exactly like a wrong password', async () => {
    const user = await signUp(api);
    const wrong = await api.call('POST', '/api/auth/signin', { json: { email: user.email, password: 'not the password' } });
    const unknown = await api.call('POST', '/api/auth/signin', { json: { email: freshEmail('nobody'), password: 'not the password' } });
    for (const res of [wrong, unknown]) {
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Token/);
    }
    expect(unknown.body).toEqual(wrong.body);
    expect(wrong.body.error.code).toBe('invalid_credentials');
  });

  it('refuses huge passwords before hashing: 413 past 64 KiB of body, 422 past 256 characters', async () => {
    const res = await api.call('POST', '/api/auth/signin', { json: { email: freshEmail(), password: 'x'.repeat(1_000_000) } });
    expect(res.status).toBe(413);
    const long = await api.call('POST', '/api/auth/signin', { json: { email: freshEmail(), password: 'x'.repeat(257) } });
    expect(long.status).toBe(422);
    expect(long.body.error.fields.password).toBeDefined();
  });

  it('needs no Authorization header and ignores one', async () => {
    const user = await signUp(api);
    const res = await api.call('POST', '/api/auth/signin', { token: 'garbage', json: { email: user.email, password: user.password } });
    expect(res.status).toBe(200);
  });
});

describe('GET /api/auth/user', () => {
  it('returns the session user of the token', async () => {
    const user = await signUp(api, 'me');
    const res = await api.call('GET', '/api/auth/user', { token: user.token });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id: user.uuid, email: user.email, aud: 'authenticated', user_metadata: { firstName: 'me' } });
  });

  it('is 401 with WWW-Authenticate without a valid token', async () => {
    for (const headers of [
      {},
      { authorization: 'Token' },
      { authorization: 'Token not.a.jwt' },
      { authorization: 'Basic dXNlcjpwYXNz' },
    ] as Record<string, string>[]) {
      const res = await api.call('GET', '/api/auth/user', { headers });
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('unauthorized');
      expect(res.headers.get('www-authenticate')).toMatch(/^Token/);
    }
  });

  it('takes Token and Bearer in any case, never a query parameter or a second header', async () => {
    const user = await signUp(api);
    for (const scheme of ['Token', 'token', 'TOKEN', 'Bearer', 'bearer']) {
      const res = await api.call('GET', '/api/auth/user', { headers: { authorization: `${scheme} ${user.token}` } });
      expect(res.status, scheme).toBe(200);
    }
    expect((await api.call('GET', `/api/auth/user?access_token=${user.token}`)).status).toBe(401);
    const twice = await api.call('GET', '/api/auth/user', { headers: { authorization: `Token ${user.token}, Token ${user.token}` } });
    expect(twice.status).toBe(401);
    const extra = await api.call('GET', '/api/auth/user', { headers: { authorization: `Token ${user.token} extra` } });
    expect(extra.status).toBe(401);
  });
});
