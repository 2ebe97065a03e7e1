import createClient from 'openapi-fetch';
import { describe, expect, it } from 'vitest';
import type { paths } from '../src/index.js';
import { PASSWORD, baseUrl, unique } from './helpers.js';

// The Supabase-compatible routes are for @supabase/auth-js, not for RosterClient; the types this
// package exports still describe them, so a caller with openapi-fetch gets them checked.
const gotrue = createClient<paths>({ baseUrl });

describe('the /auth/v1 paths, typed from the exported `paths`', () => {
  it('signup, token (password grant), user: bare bodies that match their types', async () => {
    const email = `${unique('gt')}@example.com`;
    const signup = await gotrue.POST('/auth/v1/signup', { body: { email, password: PASSWORD, data: { firstName: 'Gia', plan: 'pro' } } });
    expect(signup.response.status).toBe(200);
    // The session and its user (a deployment concealing accounts would answer the user alone).
    expect(signup.data && 'user' in signup.data ? signup.data.user.email : undefined).toBe(email);

    const token = await gotrue.POST('/auth/v1/token', {
      params: { query: { grant_type: 'password' } },
      body: { email, password: PASSWORD },
    });
    expect(token.data).toMatchObject({ token_type: 'bearer', user: { email } });
    const accessToken = token.data?.access_token ?? '';

    const user = await gotrue.GET('/auth/v1/user', { headers: { Authorization: `Bearer ${accessToken}` } });
    expect(user.data).toMatchObject({ email, user_metadata: { plan: 'pro' } });
  });

  it("answers GoTrue's error shape: code, error_code and msg", async () => {
    const refused = await gotrue.POST('/auth/v1/token', {
      params: { query: { grant_type: 'password' } },
      body: { email: `${unique('nobody')}@example.com`, password: PASSWORD },
    });
    expect(refused.response.status).toBe(400);
    expect(refused.error).toMatchObject({ code: 'invalid_credentials', error_code: 'invalid_credentials', msg: expect.any(String) });
  });
});
