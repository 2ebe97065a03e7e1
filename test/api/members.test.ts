import { describe, expect, it } from 'vitest';
import { addMember, createTeam, signUp, useApi } from '../helpers/api.ts';

const api = useApi();

describe('members', () => {
  it('lists members with the seed fields plus userId, in the order they joined', async () => {
    const [owner, member] = [await signUp(api, 'owner'), await signUp(api, 'member')];
    const { slug } = await createTeam(api, owner);
    await addMember(api, slug, owner, member, 'MEMBER');
    const res = await api.call('GET', `/api/teams/${slug}/members`, { token: member.token });
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(2);
    for (const m of res.body.data) {
      expect(Object.keys(m).sort()).toEqual(['createdAt', 'email', 'firstName', 'id', 'lastName', 'role', 'updatedAt', 'userId']);
      expect(Number.isSafeInteger(m.id) && Number.isSafeInteger(m.userId)).toBe(true);
    }
    expect(res.body.data.map((m: { role: string; firstName: string }) => [m.role, m.firstName])).toEqual([
      ['OWNER', 'owner'],
      ['MEMBER', 'member'],
    ]);
  });

  it('changes a role and returns the membership record', async () => {
    const [owner, member] = [await signUp(api), await signUp(api)];
    const team = await createTeam(api, owner);
    const memberId = await addMember(api, team.slug, owner, member, 'MEMBER');
    const res = await api.call('PUT', `/api/teams/${team.slug}/members/${memberId}`, { token: owner.token, json: { role: 'ADMIN' } });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      id: memberId,
      teamId: team.id,
      userId: expect.any(Number),
      role: 'ADMIN',
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const listed = await api.call('GET', `/api/teams/${team.slug}/members`, { token: owner.token });
    expect(listed.body.data.find((m: { id: number }) => m.id === memberId).role).toBe('ADMIN');
  });

  it('promotes to OWNER, after which the first owner may step down', async () => {
    const [first, second] = [await signUp(api), await signUp(api)];
    const { slug } = await createTeam(api, first);
    const secondId = await addMember(api, slug, first, second, 'MEMBER');
    expect((await api.call('PUT', `/api/teams/${slug}/members/${secondId}`, { token: first.token, json: { role: 'OWNER' } })).status).toBe(
      200,
    );
    const firstId = (await api.call('GET', `/api/teams/${slug}/members`, { token: first.token })).body.data[0].id;
    const down = await api.call('PUT', `/api/teams/${slug}/members/${firstId}`, { token: first.token, json: { role: 'MEMBER' } });
    expect(down.status).toBe(200);
    // Now the second is the only owner: it cannot step down or leave.
    const last = await api.call('PUT', `/api/teams/${slug}/members/${secondId}`, { token: second.token, json: { role: 'ADMIN' } });
    expect(last.status).toBe(409);
    expect(last.body.error.code).toBe('last_owner');
    const leave = await api.call('DELETE', `/api/teams/${slug}/members/${secondId}`, { token: second.token });
    expect(leave.status).toBe(409);
    expect(leave.body.error.code).toBe('last_owner');
  });

  it('removes a member: {} and gone from the list; the removed user loses access at once', async () => {
    const [owner, member] = [await signUp(api), await signUp(api)];
    const { slug } = await createTeam(api, owner);
    const memberId = await addMember(api, slug, owner, member, 'MEMBER');
    const res = await api.call('DELETE', `/api/teams/${slug}/members/${memberId}`, { token: owner.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: {} });
    const listed = await api.call('GET', `/api/teams/${slug}/members`, { token: owner.token });
    expect(listed.body.data.map((m: { id: number }) => m.id)).not.toContain(memberId);
    expect((await api.call('GET', `/api/teams/${slug}`, { token: member.token })).status).toBe(404);
    expect((await api.call('DELETE', `/api/teams/${slug}/members/${memberId}`, { token: owner.token })).status).toBe(404);
  });

  it('lets a member leave', async () => {
    const [owner, member] = [await signUp(api), await signUp(api)];
    const { slug } = await createTeam(api, owner);
    const memberId = await addMember(api, slug, owner, member, 'MEMBER');
    expect((await api.call('DELETE', `/api/teams/${slug}/members/${memberId}`, { token: member.token })).status).toBe(200);
    expect((await api.call('GET', '/api/teams', { token: member.token })).body.data).toEqual([]);
  });

  it.each([
    ['a non-numeric id', 'abc'],
    ['a negative id', '-1'],
    ['a fractional id', '1.5'],
    ['an id past 2^53', '99999999999999999999'],
    ['an id of no member', '123456789'],
  ])('answers 404 for %s', async (_, memberId) => {
    const owner = await signUp(api);
    const { slug } = await createTeam(api, owner);
    const put = await api.call('PUT', `/api/teams/${slug}/members/${memberId}`, { token: owner.token, json: { role: 'ADMIN' } });
    expect(put.status).toBe(404);
    expect(put.body.error.code).toBe('not_found');
    expect((await api.call('DELETE', `/api/teams/${slug}/members/${memberId}`, { token: owner.token })).status).toBe(404);
  });

  it.each([['owner'], ['Owner'], ['SUPERUSER'], ['']])('refuses the role %j with 422', async (role) => {
    const [owner, member] = [await signUp(api), await signUp(api)];
    const { slug } = await createTeam(api, owner);
    const memberId = await addMember(api, slug, owner, member, 'MEMBER');
    const res = await api.call('PUT', `/api/teams/${slug}/members/${memberId}`, { token: owner.token, json: { role } });
    expect(res.status).toBe(422);
    expect(res.body.error.fields.role).toBeDefined();
  });
});
