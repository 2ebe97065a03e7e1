import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ROUTES } from '#lib/http/routes.ts';
import { OPERATIONS } from '#lib/openapi/operations.ts';
import { addMember, createTeam, signUp, useApi } from '../helpers/api.ts';
import { claimsOf, mfaUser } from '../helpers/mfa.ts';

const api = useApi();

const setPolicy = (token: string, team: { slug: string }, requireMfa: boolean) =>
  api.call('PUT', `/api/teams/${team.slug}`, { token, json: { name: `Team ${team.slug}`, slug: team.slug, requireMfa } });

/** A path of `route` with its parameters filled: the team's slug, and ids that name nothing. */
const pathOf = (path: string, slug: string): string =>
  path
    .replace('{slug}', slug)
    .replace(/\{(memberId|id)\}/g, '1')
    .replace(/\{(uuid|deliveryId|sessionId|factorId)\}/g, randomUUID())
    .replace('{domain}', 'example.com');

describe('a team that requires MFA', () => {
  it('is set by an owner from an aal2 session only, and each change is an audit entry', async () => {
    const owner = await signUp(api, 'owner');
    const admin = await signUp(api, 'admin');
    const team = await createTeam(api, owner);
    await addMember(api, team.slug, owner, admin, 'ADMIN');
    expect((await api.call('GET', `/api/teams/${team.slug}`, { token: owner.token })).body.data.requireMfa).toBe(false);

    const fromAal1 = await setPolicy(owner.token, team, true);
    expect(fromAal1.status).toBe(403);
    expect(fromAal1.body.error.code).toBe('mfa_required');
    const adminMfa = await mfaUser(api, admin);
    const byAdmin = await setPolicy(adminMfa.token, team, true);
    expect(byAdmin.status).toBe(403);
    expect(byAdmin.body.error.code).toBe('forbidden');

    const ownerMfa = await mfaUser(api, owner);
    const set = await setPolicy(ownerMfa.token, team, true);
    expect(set.status).toBe(200);
    expect(set.body.data.requireMfa).toBe(true);
    // The same value again changes nothing and writes no entry.
    expect((await setPolicy(ownerMfa.token, team, true)).status).toBe(200);
    expect((await setPolicy(ownerMfa.token, team, false)).body.data.requireMfa).toBe(false);

    const audit = await api.call('GET', `/api/teams/${team.slug}/audit?action=team.mfa_policy_changed`, { token: ownerMfa.token });
    expect(audit.body.data.map((e: { changes: unknown }) => e.changes)).toEqual([
      { requireMfa: { before: true, after: false } },
      { requireMfa: { before: false, after: true } },
    ]);
  });

  it('answers every team route of an aal1 session 403 mfa_required, still lists the team, and lets an aal2 session in', async () => {
    const owner = await signUp(api, 'owner');
    const member = await signUp(api, 'member');
    const team = await createTeam(api, owner);
    await addMember(api, team.slug, owner, member, 'MEMBER');
    const ownerMfa = await mfaUser(api, owner);
    expect((await setPolicy(ownerMfa.token, team, true)).status).toBe(200);

    // Every route of the table that names a team, so that a new one cannot forget the policy.
    const teamRoutes = ROUTES.filter((r) => r.path.includes('{slug}'));
    expect(teamRoutes.length).toBeGreaterThan(20);
    for (const route of teamRoutes) {
      const example = (OPERATIONS[route.name] as { example?: Record<string, unknown> }).example;
      const res = await api.call(route.method, pathOf(route.path, team.slug), {
        token: member.token,
        ...(route.body ? { json: example ?? {} } : {}),
      });
      expect({ route: route.name, status: res.status, code: res.body?.error?.code }).toEqual({
        route: route.name,
        status: 403,
        code: 'mfa_required',
      });
    }
    const teams = await api.call('GET', '/api/teams', { token: member.token });
    expect(teams.body.data.map((t: { slug: string }) => t.slug)).toContain(team.slug);

    const memberMfa = await mfaUser(api, member);
    expect(claimsOf(memberMfa.token).aal).toBe('aal2');
    expect((await api.call('GET', `/api/teams/${team.slug}`, { token: memberMfa.token })).status).toBe(200);
    expect((await api.call('GET', `/api/teams/${team.slug}/members`, { token: memberMfa.token })).status).toBe(200);
    // A session opened by password after the step-up is aal1 again.
    expect((await api.call('GET', `/api/teams/${team.slug}`, { token: memberMfa.aal1Token })).status).toBe(403);
  });

  it('takes an invitation only from an aal2 session', async () => {
    const owner = await signUp(api, 'owner');
    const invitee = await signUp(api, 'invitee');
    const team = await createTeam(api, owner);
    const ownerMfa = await mfaUser(api, owner);
    await setPolicy(ownerMfa.token, team, true);
    await api.call('POST', `/api/teams/${team.slug}/invites`, { token: ownerMfa.token, json: { email: invitee.email, role: 'MEMBER' } });
    const [invite] = (await api.call('GET', '/api/invites', { token: invitee.token })).body.data;
    const refused = await api.call('POST', `/api/invites/${invite.uuid}/accept`, { token: invitee.token });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('mfa_required');
    const inviteeMfa = await mfaUser(api, invitee);
    expect((await api.call('POST', `/api/invites/${invite.uuid}/accept`, { token: inviteeMfa.token })).status).toBe(200);
    expect((await api.call('GET', `/api/teams/${team.slug}`, { token: inviteeMfa.token })).status).toBe(200);
  });
});
