/**
 * The audit log (lib/events/audit.ts, lib/events/audit-log.ts, docs/audit.md) through the local server against
 * DynamoDB Local: what each change records, who may read it, paging and the action filter, and
 * that entries match changes one for one, also under concurrent requests.
 */
import { describe, expect, it } from 'vitest';
import { db } from '#lib/db/service.ts';
import { type Reply, type TestUser, addMember, createTeam, freshSlug, signUp, useApi } from '../helpers/api.ts';

const api = useApi();

const audit = (user: TestUser, slug: string, query = '') => api.call('GET', `/api/teams/${slug}/audit${query}`, { token: user.token });

/** Every entry of the team's log, newest first, read through the API page by page. */
const everyEntry = async (user: TestUser, slug: string, query = '') => {
  const entries = [];
  let next: string | null = `/api/teams/${slug}/audit${query}`;
  while (next) {
    const res: Reply = await api.call('GET', next, { token: user.token });
    expect(res.status).toBe(200);
    entries.push(...res.body.data);
    const link = res.headers.get('link');
    next = link ? new URL(/<([^>]+)>/.exec(link)?.[1] as string).pathname + new URL(/<([^>]+)>/.exec(link)?.[1] as string).search : null;
  }
  return entries;
};

const userIdOf = async (viewer: TestUser, slug: string, who: TestUser): Promise<number> => {
  const members = await api.call('GET', `/api/teams/${slug}/members`, { token: viewer.token });
  return members.body.data.find((m: { email: string }) => m.email === who.email).userId;
};

describe('audit log', () => {
  it('records a team’s creation, rename, role changes, removal and leaving, newest first, with the request', async () => {
    const [owner, admin, member] = [await signUp(api, 'owner'), await signUp(api, 'admin'), await signUp(api, 'member')];
    const team = await createTeam(api, owner);
    const adminId = await addMember(api, team.slug, owner, admin, 'MEMBER');
    const memberId = await addMember(api, team.slug, owner, member, 'MEMBER');
    const promoted = await api.call('PUT', `/api/teams/${team.slug}/members/${adminId}`, { token: owner.token, json: { role: 'ADMIN' } });
    expect(promoted.status).toBe(200);
    const newSlug = freshSlug('renamed');
    const renamed = await api.call('PUT', `/api/teams/${team.slug}`, { token: admin.token, json: { name: 'Renamed', slug: newSlug } });
    expect(renamed.status).toBe(200);
    expect((await api.call('DELETE', `/api/teams/${newSlug}/members/${memberId}`, { token: member.token })).status).toBe(200);
    expect((await api.call('DELETE', `/api/teams/${newSlug}/members/${adminId}`, { token: owner.token })).status).toBe(200);

    const entries = await everyEntry(owner, newSlug);
    const ownerId = await userIdOf(owner, newSlug, owner);
    const ours = entries.filter((e: { action: string }) => !e.action.startsWith('invite.'));
    expect(ours.map((e: { action: string }) => e.action)).toEqual([
      'member.removed',
      'member.left',
      'team.updated',
      'member.role_changed',
      'team.created',
    ]);
    const [removed, left, updated, roleChanged, created] = ours;
    expect(created).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      createdAt: expect.any(String),
      action: 'team.created',
      actor: { userId: ownerId, email: owner.email },
      target: { type: 'team', id: team.id },
      changes: { name: { after: `Team ${team.slug}` }, slug: { after: team.slug } },
      requestId: expect.any(String),
      sourceIp: expect.any(String),
    });
    expect(roleChanged).toMatchObject({
      actor: { userId: ownerId, email: owner.email },
      target: { type: 'member', id: adminId },
      changes: { role: { before: 'MEMBER', after: 'ADMIN' } },
      requestId: promoted.headers.get('x-request-id'),
    });
    expect(updated).toMatchObject({
      actor: { email: admin.email },
      target: { type: 'team', id: team.id },
      changes: { name: { before: `Team ${team.slug}`, after: 'Renamed' }, slug: { before: team.slug, after: newSlug } },
      requestId: renamed.headers.get('x-request-id'),
    });
    expect(left).toMatchObject({
      actor: { email: member.email },
      target: { type: 'member', id: memberId },
      changes: { role: { before: 'MEMBER' } },
    });
    expect(removed).toMatchObject({
      actor: { email: owner.email },
      target: { type: 'member', id: adminId },
      changes: { role: { before: 'ADMIN' } },
    });
    // Ids are time-ordered and the list is newest first.
    expect(entries.map((e: { id: string }) => e.id)).toEqual([...entries.map((e: { id: string }) => e.id)].sort().reverse());
  });

  it('lets OWNER and ADMIN read it; a MEMBER gets 403, a stranger 404, no token 401', async () => {
    const [owner, admin, member, stranger] = [await signUp(api), await signUp(api), await signUp(api), await signUp(api)];
    const team = await createTeam(api, owner);
    await addMember(api, team.slug, owner, admin, 'ADMIN');
    await addMember(api, team.slug, owner, member, 'MEMBER');
    expect((await audit(owner, team.slug)).status).toBe(200);
    expect((await audit(admin, team.slug)).status).toBe(200);
    expect((await audit(member, team.slug)).body.error.code).toBe('forbidden');
    expect((await audit(stranger, team.slug)).status).toBe(404);
    expect((await api.call('GET', `/api/teams/${team.slug}/audit`)).status).toBe(401);
  });

  it('pages newest first and filters by action; a cursor works only for the list that issued it', async () => {
    const owner = await signUp(api, 'owner');
    const team = await createTeam(api, owner);
    for (let i = 0; i < 5; i++) {
      const res = await api.call('PUT', `/api/teams/${team.slug}`, { token: owner.token, json: { name: `Name ${i}`, slug: team.slug } });
      expect(res.status).toBe(200);
    }
    const first = await audit(owner, team.slug, '?limit=2&action=team.updated');
    expect(first.body.data.map((e: { changes: { name: { after: string } } }) => e.changes.name.after)).toEqual(['Name 4', 'Name 3']);
    const all = await everyEntry(owner, team.slug, '?limit=2&action=team.updated');
    expect(all).toHaveLength(5);
    expect((await everyEntry(owner, team.slug, '?limit=3')).map((e: { action: string }) => e.action)).toEqual([
      ...Array(5).fill('team.updated'),
      'team.created',
    ]);
    const cursor = new URL(/<([^>]+)>/.exec(first.headers.get('link') as string)?.[1] as string).searchParams.get('cursor');
    const mixed = await audit(owner, team.slug, `?cursor=${cursor}`);
    expect(mixed.status).toBe(422);
    expect(mixed.body.error.fields).toEqual({ cursor: expect.any(String) });
    const bad = await audit(owner, team.slug, '?action=team.exploded');
    expect(bad.status).toBe(422);
    expect(bad.body.error.fields).toEqual({ action: expect.any(String) });
  });

  it('writes nothing for a refused change, and one entry per change that commits, also under a race', async () => {
    const [owner, other] = [await signUp(api, 'owner'), await signUp(api, 'other')];
    const team = await createTeam(api, owner);
    const ownerMemberId = (await api.call('GET', `/api/teams/${team.slug}/members`, { token: owner.token })).body.data[0].id;
    const lastOwner = await api.call('PUT', `/api/teams/${team.slug}/members/${ownerMemberId}`, {
      token: owner.token,
      json: { role: 'ADMIN' },
    });
    expect(lastOwner.body.error.code).toBe('last_owner');
    const otherId = await addMember(api, team.slug, owner, other, 'MEMBER');
    // Ten role changes at once, alternating: each that answers 200 wrote exactly one entry.
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        api.call('PUT', `/api/teams/${team.slug}/members/${otherId}`, { token: owner.token, json: { role: i % 2 ? 'ADMIN' : 'MEMBER' } }),
      ),
    );
    const changedRole = answers.filter((r) => r.status === 200);
    for (const r of answers) expect([200, 409]).toContain(r.status);
    const entries = await everyEntry(owner, team.slug, '?action=member.role_changed');
    // A change to the role the member already had answers 200 and writes nothing, so no entry.
    const requestIds = new Set(entries.map((e: { requestId: string }) => e.requestId));
    for (const e of entries) expect(changedRole.map((r) => r.headers.get('x-request-id'))).toContain(e.requestId);
    expect(requestIds.size).toBe(entries.length);
    expect(entries.length).toBeGreaterThanOrEqual(1);
    // The entries chain: each change starts from the role the one before it left, ending at the member's role now.
    const chain = [...entries].reverse();
    chain.forEach((e: { changes: { role: { before: string; after: string } } }, i: number) => {
      expect(e.changes.role.before).toBe(i === 0 ? 'MEMBER' : chain[i - 1].changes.role.after);
    });
    const now = (await api.call('GET', `/api/teams/${team.slug}/members`, { token: owner.token })).body.data.find(
      (m: { id: number }) => m.id === otherId,
    );
    expect(chain.at(-1).changes.role.after).toBe(now.role);
  });

  it('records each invite’s life: created (and re-invited), resent, deleted, accepted, declined', async () => {
    const [owner, ann, bob, cy] = [await signUp(api, 'owner'), await signUp(api, 'ann'), await signUp(api, 'bob'), await signUp(api, 'cy')];
    const team = await createTeam(api, owner);
    const invite = (email: string, role: string) =>
      api.call('POST', `/api/teams/${team.slug}/invites`, { token: owner.token, json: { email, role } });
    const pendingOf = async (who: TestUser) =>
      (await api.call('GET', '/api/invites', { token: who.token })).body.data.find(
        (i: { team: { slug: string } }) => i.team.slug === team.slug,
      );
    for (const who of [ann, bob, cy]) expect((await invite(who.email, 'MEMBER')).status).toBe(201);
    expect((await invite(ann.email, 'ADMIN')).status).toBe(201);
    const annInvite = await pendingOf(ann);
    expect((await api.call('POST', `/api/teams/${team.slug}/invites/${annInvite.id}/resend`, { token: owner.token })).status).toBe(200);
    expect((await api.call('DELETE', `/api/teams/${team.slug}/invites/${annInvite.id}`, { token: owner.token })).status).toBe(200);
    const bobInvite = await pendingOf(bob);
    expect((await api.call('POST', `/api/invites/${bobInvite.uuid}/accept`, { token: bob.token })).status).toBe(200);
    const cyInvite = await pendingOf(cy);
    expect((await api.call('POST', `/api/invites/${cyInvite.uuid}/decline`, { token: cy.token })).status).toBe(200);

    const entries = (await everyEntry(owner, team.slug)).filter((e: { target: { type: string } }) => e.target.type === 'invite').reverse();
    const ownerId = await userIdOf(owner, team.slug, owner);
    const bobId = await userIdOf(owner, team.slug, bob);
    const bobMember = (await api.call('GET', `/api/teams/${team.slug}/members`, { token: owner.token })).body.data.find(
      (m: { email: string }) => m.email === bob.email,
    );
    expect(entries.map((e: { action: string; target: { email: string } }) => [e.action, e.target.email])).toEqual([
      ['invite.created', ann.email],
      ['invite.created', bob.email],
      ['invite.created', cy.email],
      ['invite.created', ann.email],
      ['invite.resent', ann.email],
      ['invite.deleted', ann.email],
      ['invite.accepted', bob.email],
      ['invite.declined', cy.email],
    ]);
    const [created, , , reinvited, resent, deleted, accepted, declined] = entries;
    expect(created).toMatchObject({
      actor: { userId: ownerId, email: owner.email },
      target: { type: 'invite', id: annInvite.id, email: ann.email },
      changes: { role: { after: 'MEMBER' }, expiresAt: { after: expect.any(String) } },
    });
    expect(reinvited.changes.role).toEqual({ before: 'MEMBER', after: 'ADMIN' });
    expect(resent.changes.expiresAt.after >= resent.changes.expiresAt.before).toBe(true);
    expect(deleted.changes).toEqual({ status: { before: 'PENDING', after: 'REVOKED' } });
    expect(accepted).toMatchObject({
      actor: { userId: bobId, email: bob.email },
      changes: { status: { before: 'PENDING', after: 'ACCEPTED' }, memberId: { after: bobMember.id }, role: { after: 'MEMBER' } },
    });
    expect(declined).toMatchObject({ actor: { email: cy.email }, changes: { status: { before: 'PENDING', after: 'DECLINED' } } });
  });

  it('records an ownership transfer: nominated, declined, nominated again, accepted with both roles', async () => {
    const [owner, heir] = [await signUp(api, 'owner'), await signUp(api, 'heir')];
    const team = await createTeam(api, owner);
    const heirMemberId = await addMember(api, team.slug, owner, heir, 'MEMBER');
    const nominate = () => api.call('POST', `/api/teams/${team.slug}/transfer`, { token: owner.token, json: { memberId: heirMemberId } });
    expect((await nominate()).status).toBe(201);
    expect((await api.call('POST', `/api/teams/${team.slug}/transfer/decline`, { token: heir.token })).status).toBe(200);
    expect((await nominate()).status).toBe(201);
    expect((await api.call('DELETE', `/api/teams/${team.slug}/transfer`, { token: owner.token })).status).toBe(200);
    expect((await nominate()).status).toBe(201);
    expect((await api.call('POST', `/api/teams/${team.slug}/transfer/accept`, { token: heir.token })).status).toBe(200);
    const entries = (await everyEntry(heir, team.slug)).filter((e: { action: string }) => e.action.startsWith('transfer.')).reverse();
    expect(entries.map((e: { action: string; actor: { email: string } }) => [e.action, e.actor.email])).toEqual([
      ['transfer.created', owner.email],
      ['transfer.declined', heir.email],
      ['transfer.created', owner.email],
      ['transfer.canceled', owner.email],
      ['transfer.created', owner.email],
      ['transfer.accepted', heir.email],
    ]);
    const heirId = await userIdOf(owner, team.slug, heir);
    for (const e of entries) expect(e.target).toEqual({ type: 'transfer', id: heirMemberId, userId: heirId });
    expect(entries[0].changes).toEqual({ nominee: { after: heirMemberId } });
    expect(entries[5].changes).toEqual({
      nomineeRole: { before: 'MEMBER', after: 'OWNER' },
      nominatorRole: { before: 'OWNER', after: 'ADMIN' },
    });
  });

  it('records webhook endpoints registered and deleted, never their secret', async () => {
    const owner = await signUp(api, 'owner');
    const team = await createTeam(api, owner);
    const created = await api.call('POST', `/api/teams/${team.slug}/webhooks`, {
      token: owner.token,
      json: { url: 'https://1.1.1.1/audited', events: ['member.removed'] },
    });
    expect(created.status).toBe(201);
    const { id, secret } = created.body.data;
    expect((await api.call('DELETE', `/api/teams/${team.slug}/webhooks/${id}`, { token: owner.token })).status).toBe(200);
    const entries = (await everyEntry(owner, team.slug)).filter((e: { action: string }) => e.action.startsWith('webhook.'));
    expect(entries.map((e: { action: string; target: unknown }) => [e.action, e.target])).toEqual([
      ['webhook.deleted', { type: 'webhook', id }],
      ['webhook.created', { type: 'webhook', id }],
    ]);
    expect(entries[1].changes).toEqual({ url: { after: 'https://1.1.1.1/audited' }, events: { after: ['member.removed'] } });
    expect(JSON.stringify(entries)).not.toContain(secret);
  });

  it('records an account deletion as member.left in each of its teams', async () => {
    const [owner, leaver] = [await signUp(api, 'owner'), await signUp(api, 'leaver')];
    const [a, b] = [await createTeam(api, owner), await createTeam(api, owner)];
    const ids = [await addMember(api, a.slug, owner, leaver, 'ADMIN'), await addMember(api, b.slug, owner, leaver, 'MEMBER')];
    const leaverId = await userIdOf(owner, a.slug, leaver);
    const deleted = await api.call('DELETE', '/api/auth/user', { token: leaver.token, json: { currentPassword: leaver.password } });
    expect(deleted.status).toBe(200);
    for (const [i, team] of [a, b].entries()) {
      const [entry] = (await audit(owner, team.slug, '?action=member.left')).body.data;
      expect(entry).toMatchObject({
        actor: { userId: leaverId, email: leaver.email },
        target: { type: 'member', id: ids[i], userId: leaverId },
        changes: { role: { before: i === 0 ? 'ADMIN' : 'MEMBER' } },
        requestId: deleted.headers.get('x-request-id'),
      });
    }
  });

  it('keeps a deleted team’s log for its retention: the deletion is its last entry', async () => {
    const owner = await signUp(api, 'owner');
    const team = await createTeam(api, owner);
    expect((await api.call('DELETE', `/api/teams/${team.slug}`, { token: owner.token })).status).toBe(200);
    expect((await audit(owner, team.slug)).status).toBe(404);
    const { data } = await db().entities.auditEntry.query.byTeam({ teamId: team.id }).go({ order: 'desc' });
    expect(data.map((e) => e.action)).toEqual(['team.deleted', 'team.created']);
    expect(JSON.parse(data[0]?.changes as string)).toEqual({ name: { before: `Team ${team.slug}` }, slug: { before: team.slug } });
    const year = (data[0]?.ttl as number) - Date.now() / 1000;
    expect(year).toBeGreaterThan(364 * 86_400);
    expect(year).toBeLessThan(366 * 86_400);
  });
});
