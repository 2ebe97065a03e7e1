import { describe, expect, it } from 'vitest';
import { issueToken } from '#lib/auth/account-tokens.ts';
import { claimsOf } from '#lib/auth/session-items.ts';
import { db } from '#lib/db/service.ts';
import { AppError } from '#lib/core/errors.ts';
import { acceptInvite } from '#lib/teams/invites/my-invites.ts';
import { type TestUser, confirm, createTeam, freshEmail, signUp, useApi } from '../helpers/api.ts';
import { pausedBeforeFirstWrite } from '../helpers/paused.ts';

const api = useApi();

const PASSWORD = 'correct horse battery staple';
const MS_Z = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

const change = (user: TestUser, email: string, currentPassword = user.password) =>
  api.call('PUT', '/api/auth/user', { token: user.token, json: { email, currentPassword } });
const verify = (token: string) => api.call('POST', '/api/auth/verify', { json: { token } });
const me = (token: string) => api.call('GET', '/api/auth/user', { token });
const signIn = (email: string, password = PASSWORD) => api.call('POST', '/api/auth/signin', { json: { email, password } });
const signUpAs = (email: string) =>
  api.call('POST', '/api/auth/signup', { json: { email, password: PASSWORD, firstName: 'Sam', lastName: 'Rival' } });

/** The confirmation token the mailer would make for the user's pending address (its current tokenEpoch). */
const changeToken = async (user: TestUser): Promise<string> => {
  const u = (await db().entities.user.get({ userUuid: user.uuid }).go({ consistent: true })).data;
  if (!u?.newEmail) throw new Error('no pending change');
  return issueToken(db(), { purpose: 'email_change', email: u.newEmail, user: u }, new Date());
};

const messagesTo = async (address: string) =>
  (
    await db()
      .entities.outboxMessage.scan.where((a, op) => op.eq(a.address, address))
      .go({ pages: 'all' })
  ).data;

const ownerOf = async (email: string) => (await db().entities.emailClaim.get({ email }).go({ consistent: true })).data?.userUuid;

describe('e-mail change', () => {
  it('keeps the address until confirmed: pending new_email, a link to the new address and a notice to the old one', async () => {
    const user = await signUp(api, 'mover');
    const next = freshEmail('moved');
    const res = await change(user, next);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id: user.uuid, email: user.email, new_email: next });
    expect((await me(user.token)).body.data).toMatchObject({ email: user.email, new_email: next });

    const toNew = await messagesTo(next);
    expect(toNew).toHaveLength(1);
    expect(toNew[0]).toMatchObject({ kind: 'email_change', userUuid: user.uuid, address: next, status: 'PENDING' });
    const toOld = (await messagesTo(user.email)).filter((m) => m.kind === 'email_change_notice');
    expect(toOld).toHaveLength(1);
    expect(toOld[0]).toMatchObject({ userUuid: user.uuid, address: user.email, status: 'PENDING' });
    // Still the old address's account: sign-in with it works, the new one is not claimed.
    expect((await signIn(user.email)).status).toBe(200);
    expect(await ownerOf(next)).toBeUndefined();
  });

  it('the link makes the change: confirmed, signs in with the new address, the old one free to sign up', async () => {
    const user = await signUp(api, 'switch');
    const next = freshEmail('switched');
    expect((await change(user, next)).status).toBe(200);
    const token = await changeToken(user);

    const res = await verify(token);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id: user.uuid, email: next });
    expect(res.body.data.new_email).toBeUndefined();
    expect(res.body.data.email_confirmed_at).toMatch(MS_Z);
    expect((await me(user.token)).body.data).toMatchObject({ email: next, email_confirmed_at: res.body.data.email_confirmed_at });

    expect((await signIn(next)).status).toBe(200);
    expect((await signIn(user.email)).status).toBe(401);
    expect(await ownerOf(next)).toBe(user.uuid);
    const reuse = await signUpAs(user.email);
    expect(reuse.status).toBe(201);
    expect(await ownerOf(user.email)).toBe(reuse.body.data.session.user.id);
    // Used once.
    expect((await verify(token)).status).toBe(410);
  });

  it('answers 409 email_taken when the new address was taken meanwhile, and keeps the account as it was', async () => {
    const user = await signUp(api, 'late');
    const next = freshEmail('contested');
    expect((await change(user, next)).status).toBe(200);
    const token = await changeToken(user);
    expect((await signUpAs(next)).status).toBe(201);

    const res = await verify(token);
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('email_taken');
    expect((await me(user.token)).body.data).toMatchObject({ email: user.email, new_email: next });
    expect(await ownerOf(user.email)).toBe(user.uuid);
  });

  it('refuses an address another account has (409) and the current one (422), mailing nothing', async () => {
    const user = await signUp(api, 'picky');
    const other = await signUp(api, 'holder');
    const taken = await change(user, other.email);
    expect(taken.status).toBe(409);
    expect(taken.body.error.code).toBe('email_taken');
    const same = await change(user, user.email);
    expect(same.status).toBe(422);
    expect(same.body.error.fields.email).toBeDefined();
    expect((await messagesTo(user.email)).filter((m) => m.kind === 'email_change_notice')).toHaveLength(0);
  });

  it('needs the current password: wrong → 422 on currentPassword, missing → 422', async () => {
    const user = await signUp(api, 'guard');
    const next = freshEmail('never');
    const wrong = await change(user, next, 'not my password at all');
    expect(wrong.status).toBe(422);
    expect(wrong.body.error.fields.currentPassword).toBeDefined();
    const missing = await api.call('PUT', '/api/auth/user', { token: user.token, json: { email: next } });
    expect(missing.status).toBe(422);
    expect(missing.body.error.fields.currentPassword).toBeDefined();
    expect((await me(user.token)).body.data.new_email).toBeUndefined();
    expect(await messagesTo(next)).toHaveLength(0);
  });

  it('a second request replaces the pending address: the first link no longer works', async () => {
    const user = await signUp(api, 'fickle');
    const first = freshEmail('first');
    expect((await change(user, first)).status).toBe(200);
    const firstToken = await changeToken(user);
    const second = freshEmail('second');
    expect((await change(user, second)).status).toBe(200);
    expect((await verify(firstToken)).status).toBe(410);
    expect((await verify(await changeToken(user))).body.data.email).toBe(second);
  });

  it('a confirmed change voids the links mailed before it (tokenEpoch)', async () => {
    const user = await signUp(api, 'epoch');
    const u = (await db().entities.user.get({ userUuid: user.uuid }).go({ consistent: true })).data;
    if (!u) throw new Error('no user');
    const reset = await issueToken(db(), { purpose: 'recovery', email: u.email, user: u }, new Date());
    expect((await change(user, freshEmail('epoch-new'))).status).toBe(200);
    expect((await verify(await changeToken(user))).status).toBe(200);
    const res = await api.call('POST', '/api/auth/reset', { json: { token: reset, password: 'a fresh long passphrase 9' } });
    expect(res.status).toBe(410);
  });

  it('racing a sign-up of the same new address: exactly one account owns it', async () => {
    const rounds = await Promise.all(
      Array.from({ length: 4 }, async (_, i) => {
        const user = await signUp(api, `racer-${i}`);
        const next = freshEmail(`raced-${i}`);
        expect((await change(user, next)).status).toBe(200);
        const token = await changeToken(user);
        const [verified, signedUp] = await Promise.all([verify(token), signUpAs(next)]);
        return { user, next, verified, signedUp };
      }),
    );
    for (const { user, next, verified, signedUp } of rounds) {
      const statuses = [verified.status, signedUp.status].sort();
      expect(statuses.filter((s) => s === 200 || s === 201)).toHaveLength(1);
      const owner = await ownerOf(next);
      if (verified.status === 200) {
        expect(signedUp.body.error.code).toBe('email_taken');
        expect(owner).toBe(user.uuid);
        expect((await me(user.token)).body.data.email).toBe(next);
      } else {
        expect(verified.status).toBe(409);
        expect(verified.body.error.code).toBe('email_taken');
        expect(owner).toBe(signedUp.body.data.session.user.id);
        expect((await me(user.token)).body.data.email).toBe(user.email);
      }
    }
  });
});

describe('invitations after an e-mail change', () => {
  const invite = (by: TestUser, slug: string, email: string) =>
    api.call('POST', `/api/teams/${slug}/invites`, { token: by.token, json: { email, role: 'MEMBER' } });
  const myInvites = async (token: string) => {
    const res = await api.call('GET', '/api/invites', { token });
    expect(res.status).toBe(200);
    return res.body.data as { uuid: string; email: string; team: { slug: string } }[];
  };
  const answer = (res: { status: number; body: { error?: { code: string } } }) => `${res.status} ${res.body.error?.code ?? ''}`.trim();
  /** The `email` claim of an access token (its signature was checked when it was issued; here only read). */
  const emailClaim = (token: string): string => JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()).email;

  it("an access token from before the change answers for the new address: the old address's invites are neither listed nor answerable", async () => {
    const [owner, user] = [await signUp(api, 'inviter'), await signUp(api, 'mover')];
    const before = user.token;
    const [toOld, toNew] = [await createTeam(api, owner), await createTeam(api, owner)];
    const next = freshEmail('moved');
    expect((await invite(owner, toOld.slug, user.email)).status).toBe(201);
    expect((await invite(owner, toNew.slug, next)).status).toBe(201);
    const [oldInvite] = await myInvites(before);
    expect(oldInvite?.team.slug).toBe(toOld.slug);

    expect((await change(user, next)).status).toBe(200);
    // Pending, not confirmed: still the old address's account.
    expect((await myInvites(before)).map((i) => i.uuid)).toEqual([oldInvite?.uuid]);
    expect((await verify(await changeToken(user))).status).toBe(200);

    // The kept token still names the old address, and still works...
    expect(emailClaim(before)).toBe(user.email);
    expect((await me(before)).body.data.email).toBe(next);
    // ...but the invitations follow the account's address.
    const listed = await myInvites(before);
    expect(listed.map((i) => [i.email, i.team.slug])).toEqual([[next, toNew.slug]]);
    for (const [method, action] of [
      ['GET', ''],
      ['POST', '/accept'],
      ['POST', '/decline'],
    ] as const) {
      expect(answer(await api.call(method, `/api/invites/${oldInvite?.uuid}${action}`, { token: before })), method + action).toBe(
        '403 invite_email_mismatch',
      );
    }
    const stored = (
      await db()
        .entities.invite.get({ inviteUuid: oldInvite?.uuid ?? '' })
        .go({ consistent: true })
    ).data;
    expect(stored?.status).toBe('PENDING');
    expect((await db().entities.membership.get({ teamId: toOld.id, userUuid: user.uuid }).go({ consistent: true })).data).toBeNull();

    // The new address's invite is the account's: readable and accepted with the same old token.
    const newInvite = listed[0]?.uuid;
    expect((await api.call('GET', `/api/invites/${newInvite}`, { token: before })).body.data).toMatchObject({
      email: next,
      team: { slug: toNew.slug },
    });
    expect((await api.call('POST', `/api/invites/${newInvite}/accept`, { token: before })).status).toBe(200);

    // The old address's invite waits for whoever confirms that address next.
    const heir = await signUpAs(user.email);
    expect(heir.status).toBe(201);
    const heirToken = heir.body.data.session.access_token as string;
    await confirm(api, { email: user.email, uuid: heir.body.data.session.user.id });
    expect((await myInvites(heirToken)).map((i) => i.uuid)).toEqual([oldInvite?.uuid]);
  });

  it("a change confirmed between accept's read and its write: 403 invite_email_mismatch, nothing written", async () => {
    const [owner, user] = [await signUp(api, 'inviter'), await signUp(api, 'racer')];
    const team = await createTeam(api, owner);
    expect((await invite(owner, team.slug, user.email)).status).toBe(201);
    const [pending] = await myInvites(user.token);
    expect((await change(user, freshEmail('raced'))).status).toBe(200);
    const token = await changeToken(user);
    let confirmed = 0;
    const paused = pausedBeforeFirstWrite(async () => {
      confirmed = (await verify(token)).status;
    });
    const failed = await acceptInvite(paused, (await claimsOf(user.token)).claims, pending?.uuid ?? '', new Date()).then(
      () => null,
      (error: unknown) => error,
    );
    expect(confirmed).toBe(200);
    expect(failed).toBeInstanceOf(AppError);
    expect((failed as AppError).code).toBe('invite_email_mismatch');
    expect((await db().entities.membership.get({ teamId: team.id, userUuid: user.uuid }).go({ consistent: true })).data).toBeNull();
    expect(
      (
        await db()
          .entities.invite.get({ inviteUuid: pending?.uuid ?? '' })
          .go({ consistent: true })
      ).data?.status,
    ).toBe('PENDING');
  });
});

describe('an invite to the address a member moves to', () => {
  it('answers 409 already_member to its accept: the member is in the team under the old address', async () => {
    const owner = await signUp(api, 'move-owner');
    const member = await signUp(api, 'move-member');
    const { slug } = await createTeam(api, owner);
    const add = await api.call('POST', `/api/teams/${slug}/invites`, { token: owner.token, json: { email: member.email, role: 'MEMBER' } });
    expect(add.status).toBe(201);
    const [joining] = (await api.call('GET', '/api/invites', { token: member.token })).body.data;
    expect((await api.call('POST', `/api/invites/${joining.uuid}/accept`, { token: member.token })).status).toBe(200);
    // An invite to another address, which the member then makes theirs.
    const next = freshEmail('move-next');
    expect(
      (await api.call('POST', `/api/teams/${slug}/invites`, { token: owner.token, json: { email: next, role: 'ADMIN' } })).status,
    ).toBe(201);
    expect((await change(member, next)).status).toBe(200);
    expect((await verify(await changeToken(member))).status).toBe(200);
    const [pending] = (await api.call('GET', '/api/invites', { token: member.token })).body.data;
    expect(pending.email).toBe(next);
    const accepted = await api.call('POST', `/api/invites/${pending.uuid}/accept`, { token: member.token });
    expect([accepted.status, accepted.body.error.code]).toEqual([409, 'already_member']);
  });
});
