import { beforeAll, describe, expect, it } from 'vitest';
import { type TestUser, signUp, useApi } from '../helpers/api.ts';

/**
 * The 429 of each route that takes a password, with limits small enough to reach in a few requests
 * (the limiters themselves, at their real settings: test/load/limits.test.ts and limiters.test.ts).
 * Read by lib/core/config.ts when the server loads, after this. Every request here comes from
 * 127.0.0.1, so the sign-up test runs last: the users of the others spend the address's first sign-ups.
 */
Object.assign(process.env, {
  // Sign-up per source address: 3, and none back for an hour.
  RATE_LIMIT_SIGNUP_BURST: '3',
  RATE_LIMIT_SIGNUP_REFILL: '1',
  RATE_LIMIT_SIGNUP_REFILL_SECONDS: '3600',
  // Wrong current passwords: 2 per user (password changes take the sign-in bucket's settings, per user).
  RATE_LIMIT_IP_BURST: '2',
  RATE_LIMIT_IP_REFILL: '1',
  RATE_LIMIT_IP_REFILL_SECONDS: '3600',
  // The account's back-off after 2 consecutive failures from one network.
  RATE_LIMIT_ACCOUNT_FAILURES: '2',
});

const api = useApi();
const WRONG = 'not the password at all';

const answer = (res: { status: number; body: { error?: { code: string } }; headers: Headers }) =>
  [res.status, res.body.error?.code, res.headers.get('retry-after') !== null] as const;

let changer: TestUser;
let leaver: TestUser;
let gotrue: TestUser;
// Three sign-ups: the address's whole sign-up allowance (the sign-up test finds it spent).
beforeAll(async () => {
  changer = await signUp(api, 'limit-change');
  leaver = await signUp(api, 'limit-delete');
  gotrue = await signUp(api, 'limit-gotrue');
});

/** A GoTrue answer (docs/supabase.md): status, code, and whether Retry-After came. */
const gotrueAnswer = (res: { status: number; body: { code?: string }; headers: Headers }) =>
  [res.status, res.body.code, res.headers.get('retry-after') !== null] as const;

describe('429 rate_limited, with Retry-After', () => {
  it('on a password change, past the wrong current passwords a user may send', async () => {
    const change = () =>
      api.call('PUT', '/api/auth/user', { token: changer.token, json: { password: 'a brand new passphrase', currentPassword: WRONG } });
    const answers = [answer(await change()), answer(await change()), answer(await change())];
    expect(answers.at(-1)).toEqual([429, 'rate_limited', true]);
    expect(answers.slice(0, 2).every(([status]) => status !== 429)).toBe(true);
  });

  it("on an account deletion, once the account's back-off starts", async () => {
    const remove = () => api.call('DELETE', '/api/auth/user', { token: leaver.token, json: { currentPassword: WRONG } });
    const answers = [answer(await remove()), answer(await remove()), answer(await remove())];
    expect(answers.at(-1)).toEqual([429, 'rate_limited', true]);
    expect(answers.slice(0, 2).every(([status]) => status !== 429)).toBe(true);
  });

  it('on sign-up, past the source address allowance, on both APIs', async () => {
    const json = { email: `limit-${Date.now()}@example.com`, password: 'correct horse battery staple', firstName: 'Lim', lastName: 'It' };
    expect(answer(await api.call('POST', '/api/auth/signup', { json }))).toEqual([429, 'rate_limited', true]);
    const gotrueSignUp = await api.call('POST', '/auth/v1/signup', { json: { email: json.email, password: json.password } });
    expect(gotrueAnswer(gotrueSignUp)).toEqual([429, 'over_request_rate_limit', true]);
  });

  it('on the Supabase-compatible API: wrong passwords at the token endpoint, wrong current passwords, mail by address', async () => {
    const token = () => api.call('POST', '/auth/v1/token?grant_type=password', { json: { email: gotrue.email, password: WRONG } });
    const tokens = [gotrueAnswer(await token()), gotrueAnswer(await token()), gotrueAnswer(await token())];
    expect(tokens[0]).toEqual([400, 'invalid_credentials', false]);
    expect(tokens.at(-1)).toEqual([429, 'over_request_rate_limit', true]);
    const change = () =>
      api.call('PUT', '/auth/v1/user', {
        token: gotrue.token,
        json: { password: 'a brand new passphrase', current_password: WRONG },
      });
    const changes = [gotrueAnswer(await change()), gotrueAnswer(await change()), gotrueAnswer(await change())];
    expect(changes.at(-1)).toEqual([429, 'over_request_rate_limit', true]);
    // Reset and confirmation mail by address share the source network's allowance (3 here).
    const recover = () => api.call('POST', '/auth/v1/recover', { json: { email: gotrue.email } });
    const recovers = [
      gotrueAnswer(await recover()),
      gotrueAnswer(await recover()),
      gotrueAnswer(await recover()),
      gotrueAnswer(await recover()),
    ];
    expect(recovers.at(-1)).toEqual([429, 'over_request_rate_limit', true]);
    const resend = await api.call('POST', '/auth/v1/resend', { json: { type: 'signup', email: gotrue.email } });
    expect(gotrueAnswer(resend)).toEqual([429, 'over_request_rate_limit', true]);
  });

  it("on a passkey sign-in challenge, which spends the source address's sign-in allowance (2 here) as a password attempt does", async () => {
    const challenge = () => api.call('POST', '/api/auth/passkeys/challenge');
    const answers = [answer(await challenge()), answer(await challenge()), answer(await challenge())];
    expect(answers.at(-1)).toEqual([429, 'rate_limited', true]);
  });
});
