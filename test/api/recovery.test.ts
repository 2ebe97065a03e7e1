import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { issueToken } from '#lib/auth/account-tokens.ts';
import type { TokenPurpose } from '#lib/db/entities/users.ts';
import { db } from '#lib/db/service.ts';
import { type TestUser, freshEmail, signUp, useApi } from '../helpers/api.ts';

const api = useApi();

const recover = (email: string) => api.call('POST', '/api/auth/recover', { json: { email } });
const reset = (token: string, password: string) => api.call('POST', '/api/auth/reset', { json: { token, password } });
const signIn = (email: string, password: string) => api.call('POST', '/api/auth/signin', { json: { email, password } });
const me = (token: string) => api.call('GET', '/api/auth/user', { token });

/** A token as the mailer would make it for `user` (its current tokenEpoch), without any mail. */
const tokenFor = async (user: TestUser, purpose: Exclude<TokenPurpose, 'invitation'> = 'recovery'): Promise<string> => {
  const u = (await db().entities.user.get({ userUuid: user.uuid }).go({ consistent: true })).data;
  if (!u) throw new Error('no such user');
  return issueToken(db(), { purpose, email: u.email, user: u }, new Date());
};

const recoveryMessages = async (address: string) =>
  (
    await db()
      .entities.outboxMessage.scan.where((a, op) => op.eq(a.address, address))
      .go({ pages: 'all' })
  ).data.filter((m) => m.kind === 'recovery');

const NEW_PASSWORD = 'a brand new passphrase 42';

describe('POST /api/auth/recover', () => {
  it('answers the same for a known and an unknown address, and writes a recovery message for each', async () => {
    const user = await signUp(api, 'known');
    const unknown = freshEmail('nobody');
    const known = await recover(user.email);
    const other = await recover(unknown);
    expect(known.status).toBe(200);
    expect(other.status).toBe(200);
    expect(known.body).toEqual({ data: {} });
    expect(other.body).toEqual(known.body);
    for (const address of [user.email, unknown]) {
      const messages = await recoveryMessages(address);
      expect(messages).toHaveLength(1);
      expect(messages[0]).toMatchObject({ kind: 'recovery', address });
      expect(messages[0]?.userUuid).toBeUndefined();
    }
  });

  it("normalises the address, and answers every request alike: what the address may be sent is the mailer's to count", async () => {
    const email = freshEmail('limited');
    for (let i = 0; i < 6; i++) expect((await recover(i % 2 ? email.toUpperCase() : email)).status).toBe(200);
    // One message per request; the mailer sends at most the address's allowance of them
    // (test/api/recipient-allowances.test.ts).
    expect(await recoveryMessages(email)).toHaveLength(6);
  });

  it('refuses a body without a valid address (422)', async () => {
    const res = await api.call('POST', '/api/auth/recover', { json: { email: 'not an address' } });
    expect(res.status).toBe(422);
    expect(res.body.error.fields.email).toBeDefined();
  });
});

describe('POST /api/auth/reset', () => {
  it('sets the password, confirms the address, ends every old session and answers a session like sign-in', async () => {
    const user = await signUp(api, 'reset');
    await db().entities.user.patch({ userUuid: user.uuid }).remove(['emailConfirmedAt']).go();
    const other = (await signIn(user.email, user.password)).body.data.session;
    const token = await tokenFor(user);

    const res = await reset(token, NEW_PASSWORD);
    expect(res.status).toBe(200);
    const session = res.body.data.session;
    expect(session).toMatchObject({ token_type: 'bearer', user: { id: user.uuid, email: user.email } });
    expect(session.user.email_confirmed_at).toEqual(expect.stringMatching(/Z$/));
    expect(session.user.last_sign_in_at).toEqual(expect.any(String));
    expect((await me(session.access_token)).status).toBe(200);

    for (const old of [user.token, other.access_token]) expect((await me(old)).status).toBe(401);
    const refreshed = await api.call('POST', '/api/auth/refresh', { json: { refresh_token: user.refreshToken } });
    expect(refreshed.status).toBe(401);

    const oldPassword = await signIn(user.email, user.password);
    expect(oldPassword.status).toBe(401);
    expect(oldPassword.body.error.code).toBe('invalid_credentials');
    expect((await signIn(user.email, NEW_PASSWORD)).status).toBe(200);
    const u = (await db().entities.user.get({ userUuid: user.uuid }).go({ consistent: true })).data;
    expect(u?.emailConfirmedAt).toBe(session.user.email_confirmed_at);
    expect(u?.tokenEpoch).toBe(1);
  });

  it('keeps an earlier confirmation time', async () => {
    const user = await signUp(api, 'confirmed');
    const confirmedAt = '2026-01-02T03:04:05.678Z';
    await db().entities.user.patch({ userUuid: user.uuid }).set({ emailConfirmedAt: confirmedAt }).go();
    const res = await reset(await tokenFor(user), NEW_PASSWORD);
    expect(res.status).toBe(200);
    expect(res.body.data.session.user.email_confirmed_at).toBe(confirmedAt);
  });

  it('uses a token once: a second reset with it is 410 token_expired', async () => {
    const user = await signUp(api, 'reuse');
    const token = await tokenFor(user);
    expect((await reset(token, NEW_PASSWORD)).status).toBe(200);
    const again = await reset(token, 'yet another passphrase 7');
    expect(again.status).toBe(410);
    expect(again.body.error.code).toBe('token_expired');
    expect((await signIn(user.email, NEW_PASSWORD)).status).toBe(200);
  });

  it('of two concurrent resets with one token, exactly one succeeds', async () => {
    const user = await signUp(api, 'twice');
    const token = await tokenFor(user);
    const answers = await Promise.all([reset(token, 'first new passphrase 1'), reset(token, 'second new passphrase 2')]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 410]);
    const winner = answers[0]?.status === 200 ? 'first new passphrase 1' : 'second new passphrase 2';
    expect((await signIn(user.email, winner)).status).toBe(200);
  });

  it('a link issued before a reset dies with it (tokenEpoch)', async () => {
    const user = await signUp(api, 'epoch');
    const [first, second] = [await tokenFor(user), await tokenFor(user)];
    expect((await reset(first, NEW_PASSWORD)).status).toBe(200);
    expect((await reset(second, 'yet another passphrase 7')).status).toBe(410);
  });

  it('refuses unknown, forged, expired and cross-purpose tokens with one 410', async () => {
    const user = await signUp(api, 'cross');
    const invitation = await issueToken(
      db(),
      { purpose: 'invitation', email: user.email, inviteUuid: randomUUID(), expiresAt: new Date(Date.now() + 86_400_000).toISOString() },
      new Date(),
    );
    const expired = await issueToken(
      db(),
      { purpose: 'recovery', email: user.email, user: { userUuid: user.uuid } },
      new Date(Date.now() - 2 * 3_600_000),
    );
    const real = await tokenFor(user);
    const tokens = [
      await tokenFor(user, 'verification'),
      await tokenFor(user, 'email_change'),
      invitation,
      expired,
      real.slice(0, -1),
      'x'.repeat(43),
    ];
    const answers = await Promise.all(tokens.map((t) => reset(t, NEW_PASSWORD)));
    for (const a of answers) {
      expect(a.status).toBe(410);
      expect(a.body.error).toMatchObject({ code: 'token_expired', message: answers[0]?.body.error.message });
    }
    // None of them changed anything: the old password still works, and the real token too.
    expect((await signIn(user.email, user.password)).status).toBe(200);
    expect((await reset(real, NEW_PASSWORD)).status).toBe(200);
  });

  it('refuses a token of an address the account no longer has', async () => {
    const user = await signUp(api, 'moved');
    const token = await tokenFor(user);
    await db()
      .entities.user.patch({ userUuid: user.uuid })
      .set({ email: freshEmail('elsewhere') })
      .go();
    expect((await reset(token, NEW_PASSWORD)).status).toBe(410);
  });

  it('refuses a common password (422 on password) and leaves the token usable', async () => {
    const user = await signUp(api, 'common');
    const token = await tokenFor(user);
    const res = await reset(token, 'password123');
    expect(res.status).toBe(422);
    expect(res.body.error.fields.password).toBeDefined();
    expect((await reset(token, NEW_PASSWORD)).status).toBe(200);
  });

  it('racing sign-ins with the old password: once the reset answered, no session they opened works', async () => {
    const user = await signUp(api, 'race');
    const token = await tokenFor(user);
    const signIns = Array.from({ length: 10 }, () => signIn(user.email, user.password));
    const [resetAnswer, ...answers] = await Promise.all([reset(token, NEW_PASSWORD), ...signIns]);
    expect(resetAnswer?.status).toBe(200);
    // Sign-ins that lost count as failures, so the last few may meet the account's back-off.
    for (const a of answers) expect([200, 401, 429]).toContain(a.status);
    const opened = answers.filter((a) => a.status === 200).map((a) => a.body.data.session.access_token as string);
    for (const access of opened) expect((await me(access)).status).toBe(401);
    expect((await me(resetAnswer?.body.data.session.access_token)).status).toBe(200);
  });
});
