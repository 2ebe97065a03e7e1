import { describe, expect, it } from 'vitest';
import { addMember, createTeam, signUp, useApi } from '../helpers/api.ts';

const api = useApi();

describe('walkthrough', () => {
  it('signs up, creates a team, invites and accepts, lists members', async () => {
    const ann = await signUp(api, 'ann');
    const bob = await signUp(api, 'bob');
    const team = await createTeam(api, ann);
    const memberId = await addMember(api, team.slug, ann, bob, 'MEMBER');
    const members = await api.call('GET', `/api/teams/${team.slug}/members`, { token: ann.token });
    expect(members.status).toBe(200);
    expect(members.body.data.map((m: { email: string; role: string }) => [m.email, m.role])).toEqual([
      [ann.email, 'OWNER'],
      [bob.email, 'MEMBER'],
    ]);
    expect(members.body.data[1].id).toBe(memberId);
  });
});
