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
beforeAll(async () => {
  changer = await signUp(api, 'limit-change');
  leaver = await signUp(api, 'limit-delete');
});

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

  it('on sign-up, past the source address allowance', async () => {
    const signUpAs = (n: number) =>
      api.call('POST', '/api/auth/signup', {
        json: { email: `limit-${n}-${Date.now()}@example.com`, password: 'correct horse battery staple', firstName: 'Lim', lastName: 'It' },
      });
    expect((await signUpAs(3)).status).toBe(201);
    expect(answer(await signUpAs(4))).toEqual([429, 'rate_limited', true]);
  });
});
