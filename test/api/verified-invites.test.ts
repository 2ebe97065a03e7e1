/**
 * Issue 12 §2 and §7: invites need a confirmed address (INVITES_REQUIRE_VERIFIED_EMAIL), and only
 * mail sent counts against the team's and the sender's hourly allowances.
 */
import { describe, expect, it } from 'vitest';
import { type Api, type TestUser, addMember, confirm, createTeam, freshEmail, signUp, useApi } from '../helpers/api.ts';

// Small allowances for this file. The server and lib/core/config.ts load them on first use (lib modules
// are imported below, inside the tests), after these lines have run.
process.env.INVITE_MAILS_PER_TEAM_HOUR = '5';
process.env.INVITE_MAILS_PER_USER_HOUR = '6';

const api = useApi();

const invite = (a: Api, by: TestUser, slug: string, email: string, role = 'MEMBER') =>
  a.call('POST', `/api/teams/${slug}/invites`, { token: by.token, json: { email, role } });

const pendingFor = async (user: TestUser, slug: string) => {
  const mine = await api.call('GET', '/api/invites', { token: user.token });
  return mine.body.data.find((i: { team: { slug: string } }) => i.team.slug === slug);
};

/** The invite to `email` as the team's owner sees it: an unconfirmed invitee cannot list it. */
const teamInviteTo = async (owner: TestUser, slug: string, email: string) => {
  const listed = await api.call('GET', `/api/teams/${slug}/invites`, { token: owner.token });
  return listed.body.data.find((i: { email: string }) => i.email === email);
};

const answer = (res: { status: number; body: { error?: { code: string } } }) => `${res.status} ${res.body.error?.code ?? ''}`.trim();

/** Takes the confirmation away, as for an account made before addresses were verified. */
const unconfirm = async (user: TestUser) => {
  const { db } = await import('#lib/db/service.ts');
  await db().entities.user.patch({ userUuid: user.uuid }).remove(['emailConfirmedAt']).go();
};

describe('invites need a confirmed address', () => {
  it('an unconfirmed owner cannot invite (403 email_not_verified), and can once confirmed; a non-manager gets 403 forbidden first', async () => {
    const owner = await signUp(api, 'owner', { confirmed: false });
    const member = await signUp(api, 'member', { confirmed: false });
    const { slug } = await createTeam(api, owner);
    const refused = await invite(api, owner, slug, freshEmail());
    expect([refused.status, refused.body.error.code]).toEqual([403, 'email_not_verified']);
    expect(refused.body.error.message).toMatch(/confirm/i);
    expect((await api.call('GET', `/api/teams/${slug}/invites`, { token: owner.token })).body.data).toEqual([]);

    await confirm(api, owner);
    expect((await invite(api, owner, slug, member.email)).status).toBe(201);
    // The unconfirmed invitee cannot accept yet; confirmed, they can.
    const pending = await teamInviteTo(owner, slug, member.email);
    expect(answer(await api.call('POST', `/api/invites/${pending.uuid}/accept`, { token: member.token }))).toBe('403 email_not_verified');
    await confirm(api, member);
    expect((await api.call('POST', `/api/invites/${pending.uuid}/accept`, { token: member.token })).status).toBe(200);
    // A MEMBER may not invite at all: forbidden comes before the address check.
    await unconfirm(member);
    expect(answer(await invite(api, member, slug, freshEmail()))).toBe('403 forbidden');
    // Another team's slug: 404 first.
    const other = await createTeam(api, owner);
    expect(answer(await invite(api, member, other.slug, freshEmail()))).toBe('404 not_found');
  });

  it('an unconfirmed inviter cannot resend (403 email_not_verified): nothing written, nothing charged', async () => {
    const owner = await signUp(api, 'owner');
    const { slug } = await createTeam(api, owner);
    expect((await invite(api, owner, slug, freshEmail())).status).toBe(201);
    const [pending] = (await api.call('GET', `/api/teams/${slug}/invites`, { token: owner.token })).body.data;
    await unconfirm(owner);
    const resend = () => api.call('POST', `/api/teams/${slug}/invites/${pending.id}/resend`, { token: owner.token });
    expect(answer(await resend())).toBe('403 email_not_verified');
    expect(answer(await api.call('POST', `/api/teams/${slug}/invites/999999/resend`, { token: owner.token }))).toBe('404 not_found');
    await confirm(api, owner);
    expect((await resend()).status).toBe(200);
  });

  it("an unconfirmed invitee cannot preview, accept or decline (403); 404 and a stranger's 403 invite_email_mismatch come first", async () => {
    const owner = await signUp(api, 'owner');
    const [guest, stranger] = [await signUp(api, 'guest', { confirmed: false }), await signUp(api, 'stranger', { confirmed: false })];
    const { slug } = await createTeam(api, owner);
    expect((await invite(api, owner, slug, guest.email)).status).toBe(201);
    const pending = await teamInviteTo(owner, slug, guest.email);
    for (const [method, action] of [
      ['GET', ''],
      ['POST', '/accept'],
      ['POST', '/decline'],
    ] as const) {
      const res = await api.call(method, `/api/invites/${pending.uuid}${action}`, { token: guest.token });
      expect([res.status, res.body.error.code], action).toEqual([403, 'email_not_verified']);
      expect(res.body.error.message, action).toMatch(/confirm/i);
      expect(answer(await api.call(method, `/api/invites/${pending.uuid}${action}`, { token: stranger.token })), action).toBe(
        '403 invite_email_mismatch',
      );
      expect(
        answer(await api.call(method, `/api/invites/00000000-0000-4000-8000-000000000000${action}`, { token: guest.token })),
        action,
      ).toBe('404 not_found');
    }
    expect((await api.call('GET', `/api/teams/${slug}`, { token: guest.token })).status).toBe(404);
    await confirm(api, guest);
    expect((await api.call('GET', `/api/invites/${pending.uuid}`, { token: guest.token })).body.data).toMatchObject({
      uuid: pending.uuid,
      team: { slug },
    });
    expect((await api.call('POST', `/api/invites/${pending.uuid}/decline`, { token: guest.token })).status).toBe(200);
  });

  it('an unconfirmed account cannot list the invites addressed to it (403, also with none), and sees them once confirmed', async () => {
    const owner = await signUp(api, 'owner');
    const [guest, idle] = [await signUp(api, 'guest', { confirmed: false }), await signUp(api, 'idle', { confirmed: false })];
    const { slug } = await createTeam(api, owner);
    expect((await invite(api, owner, slug, guest.email)).status).toBe(201);
    for (const who of [guest, idle]) {
      const res = await api.call('GET', '/api/invites', { token: who.token });
      expect([res.status, res.body.error.code]).toEqual([403, 'email_not_verified']);
      expect(res.body.data).toBeUndefined();
    }
    // The session check still comes first.
    expect(answer(await api.call('GET', '/api/invites'))).toBe('401 unauthorized');
    await confirm(api, guest);
    expect((await pendingFor(guest, slug))?.email).toBe(guest.email);
    await confirm(api, idle);
    expect((await api.call('GET', '/api/invites', { token: idle.token })).body.data).toEqual([]);
  });

  it('INVITES_REQUIRE_VERIFIED_EMAIL=false: unconfirmed accounts invite, resend, list, preview, accept and decline as before', async () => {
    const [{ config }, { createInvite }, { resendInvite }, answers, { claimsOf }, { db }] = await Promise.all([
      import('#lib/core/config.ts'),
      import('#lib/teams/invites/create.ts'),
      import('#lib/teams/invites/team-invites.ts'),
      import('#lib/teams/invites/my-invites.ts'),
      import('#lib/auth/session-items.ts'),
      import('#lib/db/service.ts'),
    ]);
    const owner = await signUp(api, 'owner', { confirmed: false });
    const [guest, other] = [await signUp(api, 'guest', { confirmed: false }), await signUp(api, 'other', { confirmed: false })];
    const { slug } = await createTeam(api, owner);
    const [{ claims: asOwner }, { claims: asGuest }, { claims: asOther }] = await Promise.all([
      claimsOf(owner.token),
      claimsOf(guest.token),
      claimsOf(other.token),
    ]);
    // The environment is read once per process (this file's server has it true); the use cases
    // read the setting on each call, so it is overridden here, around direct calls only.
    const settings = config as { invitesRequireVerifiedEmail: boolean };
    settings.invitesRequireVerifiedEmail = false;
    try {
      const now = new Date();
      for (const u of [guest, other]) await createInvite(db(), asOwner, slug, { email: u.email, role: 'MEMBER' }, now);
      const mine = async (asUser: typeof asGuest) => (await answers.listMyInvites(db(), asUser, { limit: 100 }, now)).items;
      const [[first], [second]] = [await mine(asGuest), await mine(asOther)];
      if (!first || !second) throw new Error('the unconfirmed invitees do not see their invites');
      expect((await answers.getMyInvite(db(), asGuest, first.uuid, now)).team.slug).toBe(slug);
      await resendInvite(db(), asOwner, slug, first.id, now);
      await answers.acceptInvite(db(), asGuest, first.uuid, now);
      await answers.declineInvite(db(), asOther, second.uuid, now);
    } finally {
      settings.invitesRequireVerifiedEmail = true;
    }
    const members = await api.call('GET', `/api/teams/${slug}/members`, { token: owner.token });
    expect(members.body.data.map((m: { email: string }) => m.email).sort()).toEqual([owner.email, guest.email].sort());
    // And back on: refused again.
    expect(answer(await invite(api, owner, slug, freshEmail()))).toBe('403 email_not_verified');
  });
});

describe('only mail sent counts', () => {
  it('409s (already a member, self-invite, a member invited again) spend nothing of the team allowance', async () => {
    const [owner, member] = [await signUp(api, 'owner'), await signUp(api, 'member')];
    const { slug } = await createTeam(api, owner);
    await addMember(api, slug, owner, member, 'MEMBER'); // the first of the team's 5
    for (let n = 0; n < 3; n++) expect((await invite(api, owner, slug, freshEmail())).status).toBe(201);
    // One left. Refusals: the self-invite before any charge, the member by the transaction (given back).
    for (let n = 0; n < 3; n++) {
      expect(answer(await invite(api, owner, slug, member.email))).toBe('409 already_member');
      expect(answer(await invite(api, owner, slug, owner.email))).toBe('409 already_member');
    }
    expect((await invite(api, owner, slug, freshEmail())).status).toBe(201);
    const limited = await invite(api, owner, slug, freshEmail());
    expect(answer(limited)).toBe('429 rate_limited');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('each user may cause 6 invitation mails an hour across all teams (429 with Retry-After); another owner still can', async () => {
    const [owner, coOwner] = [await signUp(api, 'owner'), await signUp(api, 'co')];
    const teams = [await createTeam(api, owner), await createTeam(api, owner), await createTeam(api, owner)];
    const [first, second, third] = teams.map((t) => t.slug) as [string, string, string];
    await addMember(api, first, owner, coOwner, 'OWNER'); // the owner's first mail
    for (const slug of [first, second, second, third, third]) expect((await invite(api, owner, slug, freshEmail())).status).toBe(201);

    const limited = await invite(api, owner, third, freshEmail());
    expect(answer(limited)).toBe('429 rate_limited');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    const [pending] = (await api.call('GET', `/api/teams/${first}/invites`, { token: owner.token })).body.data;
    expect(answer(await api.call('POST', `/api/teams/${first}/invites/${pending.id}/resend`, { token: owner.token }))).toBe(
      '429 rate_limited',
    );
    // The teams have allowance left (2 of 5 used in each): the limit is the sender's.
    expect((await invite(api, coOwner, first, freshEmail())).status).toBe(201);
  });
});
