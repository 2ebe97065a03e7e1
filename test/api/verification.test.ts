import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { issueToken } from '#lib/auth/account-tokens.ts';
import { hashOpaqueToken } from '#lib/auth/opaque-tokens.ts';
import type { TokenPurpose } from '#lib/db/entities/users.ts';
import { db } from '#lib/db/service.ts';
import { type TestUser, freshEmail, signUp, useApi } from '../helpers/api.ts';

const api = useApi();

const MS_Z = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const PASSWORD = 'correct horse battery staple';

const verify = (token: string) => api.call('POST', '/api/auth/verify', { json: { token } });
const resend = (token: string) => api.call('POST', '/api/auth/verify/resend', { token });
const me = (token: string) => api.call('GET', '/api/auth/user', { token });

/** A token as the mailer would make it for `user` (its current address and tokenEpoch), issued at `at`. */
const tokenFor = async (
  user: TestUser,
  purpose: Exclude<TokenPurpose, 'invitation'> = 'verification',
  at = new Date(),
): Promise<string> => {
  const u = (await db().entities.user.get({ userUuid: user.uuid }).go({ consistent: true })).data;
  if (!u) throw new Error('no such user');
  return issueToken(db(), { purpose, email: u.email, user: u }, at);
};

/** A user whose address is not confirmed, whatever the sign-up helper does. */
const unconfirmed = async (name: string): Promise<TestUser> => {
  const user = await signUp(api, name);
  await db().entities.user.patch({ userUuid: user.uuid }).remove(['emailConfirmedAt']).go();
  return user;
};

const messagesTo = async (address: string, kind = 'verification') =>
  (
    await db()
      .entities.outboxMessage.scan.where((a, op) => op.eq(a.address, address))
      .go({ pages: 'all' })
  ).data.filter((m) => m.kind === kind);

describe('POST /api/auth/verify', () => {
  it('confirms the address: email_confirmed_at and confirmed_at, ms-precision Z, in the answer and afterwards', async () => {
    const user = await unconfirmed('verify');
    expect((await me(user.token)).body.data).toMatchObject({ email_confirmed_at: null, confirmed_at: null });
    const res = await verify(await tokenFor(user));
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id: user.uuid, email: user.email });
    expect(res.body.data.email_confirmed_at).toMatch(MS_Z);
    expect(res.body.data.confirmed_at).toBe(res.body.data.email_confirmed_at);
    expect(res.body.data.new_email).toBeUndefined();
    expect((await me(user.token)).body.data).toMatchObject({
      email_confirmed_at: res.body.data.email_confirmed_at,
      confirmed_at: res.body.data.email_confirmed_at,
    });
  });

  it('keeps the first confirmation time when an address is confirmed again', async () => {
    const user = await unconfirmed('twice');
    const first = (await verify(await tokenFor(user))).body.data.email_confirmed_at;
    const again = await verify(await tokenFor(user));
    expect(again.status).toBe(200);
    expect(again.body.data.email_confirmed_at).toBe(first);
  });

  it('answers 410 token_expired with one message for unknown, used, expired, truncated, forged and cross-purpose tokens', async () => {
    const user = await unconfirmed('refused');
    const used = await tokenFor(user);
    expect((await verify(used)).status).toBe(200);
    const live = await tokenFor(user);
    const expired = await tokenFor(user, 'verification', new Date(Date.now() - 25 * 3_600_000));
    const recovery = await tokenFor(user, 'recovery');
    const invitation = await issueToken(
      db(),
      {
        purpose: 'invitation',
        email: user.email,
        inviteUuid: '0190a0a0-0000-7000-8000-000000000000',
        expiresAt: new Date(Date.now() + 86_400_000).toISOString(),
      },
      new Date(),
    );
    const refusals = {
      unknown: randomBytes(32).toString('base64url'),
      used,
      expired,
      truncated: live.slice(0, -1),
      forged: `${live.slice(0, -1)}${live.endsWith('A') ? 'B' : 'A'}`,
      recovery,
      invitation,
    };
    const messages = new Set<string>();
    for (const [why, token] of Object.entries(refusals)) {
      const res = await verify(token);
      expect(res.status, why).toBe(410);
      expect(res.body.error.code, why).toBe('token_expired');
      messages.add(res.body.error.message);
    }
    expect(messages.size).toBe(1);
    // A refused token was not used up: the cross-purpose ones still exist.
    for (const token of [recovery, invitation]) {
      expect(
        (
          await db()
            .entities.accountToken.get({ tokenHash: hashOpaqueToken(token) })
            .go({ consistent: true })
        ).data,
      ).not.toBeNull();
    }
    // The live one still works.
    expect((await verify(live)).status).toBe(200);
  });

  it('refuses a token issued before a password change (its tokenEpoch) with 410', async () => {
    const user = await unconfirmed('epoch');
    const token = await tokenFor(user);
    const changed = await api.call('PUT', '/api/auth/user', {
      token: user.token,
      json: { password: 'another long passphrase 7', currentPassword: PASSWORD },
    });
    expect(changed.status).toBe(200);
    expect((await verify(token)).status).toBe(410);
  });

  it('refuses a body without a token with 422', async () => {
    const res = await api.call('POST', '/api/auth/verify', { json: {} });
    expect(res.status).toBe(422);
    expect(res.body.error.fields.token).toBeDefined();
  });

  it('of two concurrent verifications with one token, exactly one succeeds', async () => {
    const user = await unconfirmed('race');
    const token = await tokenFor(user);
    const answers = await Promise.all(Array.from({ length: 4 }, () => verify(token)));
    expect(answers.map((r) => r.status).sort()).toEqual([200, 410, 410, 410]);
  });
});

describe('POST /api/auth/verify/resend', () => {
  it('writes a verification message for an unconfirmed address and answers {}', async () => {
    const user = await unconfirmed('resend');
    const before = (await messagesTo(user.email)).length;
    const res = await resend(user.token);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: {} });
    const after = await messagesTo(user.email);
    expect(after).toHaveLength(before + 1);
    expect(after.every((m) => m.userUuid === user.uuid && m.status === 'PENDING')).toBe(true);
  });

  it('sends nothing to a confirmed address, and charges nothing', async () => {
    const user = await unconfirmed('confirmed');
    expect((await verify(await tokenFor(user))).status).toBe(200);
    const before = (await messagesTo(user.email)).length;
    for (let i = 0; i < 7; i++) {
      const res = await resend(user.token);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ data: {} });
    }
    expect(await messagesTo(user.email)).toHaveLength(before);
  });

  it('refuses the sixth resend of an hour with 429 and Retry-After, writing no message for it', async () => {
    const user = await unconfirmed('limited');
    const before = (await messagesTo(user.email)).length;
    for (let i = 0; i < 5; i++) expect((await resend(user.token)).status).toBe(200);
    const sixth = await resend(user.token);
    expect(sixth.status).toBe(429);
    expect(sixth.body.error.code).toBe('rate_limited');
    expect(Number(sixth.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await messagesTo(user.email)).toHaveLength(before + 5);
  });

  it('needs a session (401)', async () => {
    expect((await api.call('POST', '/api/auth/verify/resend')).status).toBe(401);
  });
});

describe('sign-up and verification', () => {
  const signUpWith = (email: string, inviteToken?: string) =>
    api.call('POST', '/api/auth/signup', {
      json: { email, password: PASSWORD, firstName: 'Ivy', lastName: 'Invited', ...(inviteToken !== undefined ? { inviteToken } : {}) },
    });
  const invitationToken = (email: string) =>
    issueToken(
      db(),
      {
        purpose: 'invitation',
        email,
        inviteUuid: '0190a0a0-0000-7000-8000-000000000001',
        expiresAt: new Date(Date.now() + 86_400_000).toISOString(),
      },
      new Date(),
    );

  it('writes one verification message for the new account, which starts unconfirmed', async () => {
    const email = freshEmail('new');
    const res = await signUpWith(email);
    expect(res.status).toBe(201);
    const user = res.body.data.session.user;
    expect(user).toMatchObject({ email, email_confirmed_at: null, confirmed_at: null });
    const messages = await messagesTo(email);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatchObject({ kind: 'verification', userUuid: user.id, address: email, status: 'PENDING' });
    expect(messages[0]?.createdAt).toMatch(MS_Z);
    expect(messages[0]?.ttl).toBeGreaterThan(Date.now() / 1000);
  });

  it('with the invitation token of its address: confirmed at once, the token used up, no verification mail', async () => {
    const email = freshEmail('invited');
    const token = await invitationToken(email);
    const res = await signUpWith(email, token);
    expect(res.status).toBe(201);
    expect(res.body.data.session.user.email_confirmed_at).toMatch(MS_Z);
    expect(res.body.data.session.user.confirmed_at).toBe(res.body.data.session.user.email_confirmed_at);
    expect(await messagesTo(email)).toHaveLength(0);
    expect(
      (
        await db()
          .entities.accountToken.get({ tokenHash: hashOpaqueToken(token) })
          .go({ consistent: true })
      ).data,
    ).toBeNull();
  });

  it('with a token that does not fit (another address, unknown, another purpose): an ordinary sign-up', async () => {
    const other = await invitationToken(freshEmail('someone-else'));
    const user = await unconfirmed('holder');
    const recovery = await tokenFor(user, 'recovery');
    for (const token of [other, randomBytes(32).toString('base64url'), recovery]) {
      const email = freshEmail('ordinary');
      const res = await signUpWith(email, token);
      expect(res.status).toBe(201);
      expect(res.body.data.session.user.email_confirmed_at).toBeNull();
      expect(await messagesTo(email)).toHaveLength(1);
    }
    // Not used up by a sign-up it did not fit.
    expect(
      (
        await db()
          .entities.accountToken.get({ tokenHash: hashOpaqueToken(other) })
          .go({ consistent: true })
      ).data,
    ).not.toBeNull();
  });
});
