import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { deleteAccount } from '#lib/identity/account-deletion.ts';
import { claimsOf } from '#lib/auth/session-items.ts';
import { db } from '#lib/db/service.ts';
import { AppError } from '#lib/core/errors.ts';
import { pausedBeforeFirstWrite } from '../helpers/paused.ts';
import { type TestUser, addMember, createTeam, freshEmail, signUp, useApi } from '../helpers/api.ts';

const api = useApi();

const deleteMe = (user: TestUser, currentPassword = user.password) =>
  api.call('DELETE', '/api/auth/user', { token: user.token, json: { currentPassword } });

/** The team item and its OWNER memberships, read consistently from the team's own partition. */
const ownersOf = async (teamId: number) => {
  const team = (await db().entities.team.get({ teamId }).go({ consistent: true })).data;
  const members = (await db().entities.membership.query.primary({ teamId }).go({ consistent: true, pages: 'all' })).data;
  return { ownerCount: team?.ownerCount, owners: members.filter((m) => m.role === 'OWNER').map((m) => m.userUuid) };
};

describe('DELETE /api/auth/user', () => {
  it('refuses a wrong password with 422 on currentPassword, and deletes nothing', async () => {
    const user = await signUp(api, 'wrong');
    const res = await deleteMe(user, 'not my password at all');
    expect(res.status).toBe(422);
    expect(res.body.error.fields.currentPassword).toBeDefined();
    expect((await api.call('GET', '/api/auth/user', { token: user.token })).status).toBe(200);
  });

  it('refuses the sole owner of teams with 409 sole_owner naming them, and deletes nothing', async () => {
    const user = await signUp(api, 'sole');
    const [a, b] = [await createTeam(api, user), await createTeam(api, user)];
    const res = await deleteMe(user);
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('sole_owner');
    expect(res.body.error.fields.teams.split(', ').sort()).toEqual([a.slug, b.slug].sort());
    expect(res.body.error.message).toContain(a.slug);
    expect(res.body.error.message).toContain(b.slug);
    expect((await api.call('GET', '/api/teams', { token: user.token })).body.data).toHaveLength(2);
  });

  it('deletes the account: memberships, sessions and address go; co-owned teams keep their other owner; sent invites remain', async () => {
    const user = await signUp(api, 'leaver');
    const other = await signUp(api, 'stayer');
    const member = await signUp(api, 'member');
    const shared = await createTeam(api, user);
    await addMember(api, shared.slug, user, other, 'OWNER');
    const joined = await createTeam(api, other);
    await addMember(api, joined.slug, other, user, 'ADMIN');
    await addMember(api, joined.slug, other, member, 'MEMBER');
    const invitee = freshEmail('invitee');
    expect(
      (await api.call('POST', `/api/teams/${shared.slug}/invites`, { token: user.token, json: { email: invitee, role: 'MEMBER' } })).status,
    ).toBe(201);
    const second = (await api.call('POST', '/api/auth/signin', { json: { email: user.email, password: user.password } })).body.data.session;

    const res = await deleteMe(user);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: {} });

    // Every session is over, this one included.
    for (const token of [user.token, second.access_token]) {
      expect((await api.call('GET', '/api/auth/user', { token })).status).toBe(401);
      expect((await api.call('GET', '/api/teams', { token })).status).toBe(401);
    }
    expect((await api.call('POST', '/api/auth/refresh', { json: { refresh_token: user.refreshToken } })).status).toBe(401);
    const signIn = await api.call('POST', '/api/auth/signin', { json: { email: user.email, password: user.password } });
    expect(signIn.status).toBe(401);
    expect(signIn.body.error.code).toBe('invalid_credentials');

    // The teams go on without the user.
    expect(await ownersOf(shared.id)).toEqual({ ownerCount: 1, owners: [other.uuid] });
    for (const slug of [shared.slug, joined.slug]) {
      const members = await api.call('GET', `/api/teams/${slug}/members`, { token: other.token });
      expect(members.body.data.map((m: { email: string }) => m.email)).not.toContain(user.email);
    }
    expect((await db().entities.membership.query.byUser({ userUuid: user.uuid }).go()).data).toEqual([]);
    const invites = await api.call('GET', `/api/teams/${shared.slug}/invites`, { token: other.token });
    expect(invites.body.data).toHaveLength(1);
    expect(invites.body.data[0]).toMatchObject({ email: invitee, invitedBy: null });

    // The address is free again: a new account, with a new id.
    const again = await api.call('POST', '/api/auth/signup', {
      json: { email: user.email, password: 'another passphrase 99', firstName: 'New', lastName: 'Person' },
    });
    expect(again.status).toBe(201);
    expect(again.body.data.session.user.id).not.toBe(user.uuid);
    expect((await api.call('GET', '/api/teams', { token: again.body.data.session.access_token })).body.data).toEqual([]);
  });

  it('racing a demotion of the other owner: the team never ends without an owner', async () => {
    // The deletion hashes the password first: delays up to past that sweep where the demotion lands.
    for (const delay of [0, 150, 300, 400, 500, 600, 800]) {
      const user = await signUp(api, 'racer');
      const other = await signUp(api, 'demoted');
      const team = await createTeam(api, user);
      const otherId = await addMember(api, team.slug, user, other, 'OWNER');
      const [deleted, demoted] = await Promise.all([
        deleteMe(user),
        sleep(delay).then(() =>
          api.call('PUT', `/api/teams/${team.slug}/members/${otherId}`, { token: other.token, json: { role: 'ADMIN' } }),
        ),
      ]);
      // Both winning would leave the team without an owner; both losing (a conflict) is allowed.
      expect([deleted.status, demoted.status]).not.toEqual([200, 200]);
      if (deleted.status !== 200) expect(deleted.body.error.code).toMatch(/^(sole_owner|conflict)$/);
      if (demoted.status !== 200) expect(demoted.body.error.code).toMatch(/^(last_owner|conflict)$/);
      const after = await ownersOf(team.id);
      expect(after.ownerCount).toBeGreaterThanOrEqual(1);
      expect(after.owners).toHaveLength(after.ownerCount as number);
      const userLeft = (await db().entities.user.get({ userUuid: user.uuid }).go({ consistent: true })).data;
      expect(userLeft === null).toBe(deleted.status === 200);
    }
  });

  it("a demotion between the deletion's reads and its transaction: the transaction refuses, 409 sole_owner", async () => {
    const user = await signUp(api, 'paused');
    const other = await signUp(api, 'demoted');
    const team = await createTeam(api, user);
    const otherId = await addMember(api, team.slug, user, other, 'OWNER');
    let demoted: number | undefined;
    const paused = pausedBeforeFirstWrite(async () => {
      demoted = (await api.call('PUT', `/api/teams/${team.slug}/members/${otherId}`, { token: other.token, json: { role: 'ADMIN' } }))
        .status;
    });
    const refused = await deleteAccount(
      paused,
      (await claimsOf(user.token)).claims,
      { currentPassword: user.password },
      { ip: '127.0.0.1', userAgent: undefined },
      new Date(),
    ).then(
      () => null,
      (error: unknown) => error,
    );
    expect(demoted).toBe(200);
    expect(refused).toBeInstanceOf(AppError);
    expect(refused).toMatchObject({ code: 'sole_owner', fields: { teams: team.slug } });
    expect(await ownersOf(team.id)).toEqual({ ownerCount: 1, owners: [user.uuid] });
    expect((await api.call('GET', '/api/auth/user', { token: user.token })).status).toBe(200);
  });

  it("a promotion between the deletion's reads and its transaction: read again, the co-owned team keeps its owner", async () => {
    const user = await signUp(api, 'promoted');
    const other = await signUp(api, 'owner');
    const team = await createTeam(api, other);
    const userId = await addMember(api, team.slug, other, user, 'ADMIN');
    const paused = pausedBeforeFirstWrite(async () => {
      const res = await api.call('PUT', `/api/teams/${team.slug}/members/${userId}`, { token: other.token, json: { role: 'OWNER' } });
      expect(res.status).toBe(200);
    });
    await deleteAccount(
      paused,
      (await claimsOf(user.token)).claims,
      { currentPassword: user.password },
      { ip: '127.0.0.1', userAgent: undefined },
      new Date(),
    );
    // Deleted as an OWNER (the count follows), not as the ADMIN first read.
    expect(await ownersOf(team.id)).toEqual({ ownerCount: 1, owners: [other.uuid] });
  });

  it('finishes an earlier deletion that stopped before ending the sessions', async () => {
    const user = await signUp(api, 'halfway');
    // As if a deletion had committed its transaction and then failed: the account gone, a session left.
    await db().entities.user.delete({ userUuid: user.uuid }).go();
    await db().entities.emailClaim.delete({ email: user.email }).go();
    expect((await api.call('GET', '/api/teams', { token: user.token })).status).toBe(200);
    const res = await deleteMe(user, 'whatever it was');
    expect(res.status).toBe(200);
    expect((await api.call('GET', '/api/teams', { token: user.token })).status).toBe(401);
  });
});
