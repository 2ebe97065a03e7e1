import { describe, expect, expectTypeOf, it } from 'vitest';
import { RosterError, type Team } from '../src/index.js';
import { PASSWORD, newClient, only, present, recordingFetch, signedUp, unique } from './helpers.js';

describe('teams, invites and members', () => {
  it('invites a second user by e-mail, who accepts and becomes a member', async () => {
    const ann = await signedUp('ann');
    const bob = await signedUp('bob');
    const slug = unique('acme');
    const team = await ann.client.teams.create({ name: 'Acme', slug });
    expect(team).toMatchObject({ name: 'Acme', slug, logo: null });
    expect(await ann.client.teams.get(slug)).toEqual(team);

    await ann.client.invites.create(slug, { email: bob.email.toUpperCase(), role: 'ADMIN' });
    const pending = only((await ann.client.invites.list(slug)).data);
    expect(pending).toMatchObject({ email: bob.email, role: 'ADMIN', status: 'PENDING', team: { slug } });
    expect(await ann.client.invites.get(slug, pending.id)).toEqual(pending);
    await ann.client.invites.resend(slug, pending.id);

    const mine = await bob.client.myInvites.list();
    expect(mine.next).toBeNull();
    const invite = only(mine.data);
    expect(invite).toMatchObject({ uuid: pending.uuid, team: { id: team.id, name: 'Acme', slug }, invitedBy: { email: ann.email } });
    expect(await bob.client.myInvites.get(invite.uuid)).toMatchObject({ uuid: invite.uuid });
    await bob.client.myInvites.accept(invite.uuid);

    const members = await ann.client.members.list(slug);
    expect(members.data.map((m) => [m.email, m.role])).toEqual([
      [ann.email, 'OWNER'],
      [bob.email, 'ADMIN'],
    ]);
    expect((await bob.client.teams.list()).data.map((t) => t.slug)).toEqual([slug]);
    expect((await ann.client.invites.list(slug)).data).toEqual([]);

    const bobMember = present(members.data[1]);
    const demoted = await ann.client.members.updateRole(slug, bobMember.id, 'MEMBER');
    expect(demoted).toMatchObject({ id: bobMember.id, teamId: team.id, userId: bobMember.userId, role: 'MEMBER' });
    await bob.client.members.remove(slug, bobMember.id); // a member may leave
    expect((await ann.client.members.list(slug)).data.map((m) => m.email)).toEqual([ann.email]);
  });

  it('sends idempotencyKey as Idempotency-Key: a retry gets the first answer and does nothing twice', async () => {
    const ann = await signedUp('ann');
    const slug = unique('once');
    const idempotencyKey = crypto.randomUUID();
    const first = await ann.client.teams.create({ name: 'Once', slug }, { idempotencyKey });
    expect(await ann.client.teams.create({ name: 'Once', slug }, { idempotencyKey })).toEqual(first);
    const reused = await ann.client.teams.create({ name: 'Other', slug: unique('other') }, { idempotencyKey }).catch((e: unknown) => e);
    expect(reused).toMatchObject({ status: 422, code: 'idempotency_key_reused' });
    const bob = await signedUp('bob');
    await ann.client.invites.create(slug, { email: bob.email, role: 'MEMBER' }, { idempotencyKey: 'invite-bob' });
    await ann.client.invites.create(slug, { email: bob.email, role: 'MEMBER' }, { idempotencyKey: 'invite-bob' });
    expect((await ann.client.invites.list(slug)).data).toHaveLength(1);
  });

  it('declines and revokes invites', async () => {
    const ann = await signedUp('ann');
    const cy = await signedUp('cy');
    const slug = unique('beta');
    await ann.client.teams.create({ name: 'Beta', slug });
    await ann.client.invites.create(slug, { email: cy.email, role: 'MEMBER' });
    const invite = only((await cy.client.myInvites.list()).data);
    await cy.client.myInvites.decline(invite.uuid);
    expect((await cy.client.myInvites.list()).data).toEqual([]);

    await ann.client.invites.create(slug, { email: cy.email, role: 'MEMBER' });
    const again = only((await ann.client.invites.list(slug)).data);
    await ann.client.invites.delete(slug, again.id);
    const error = await cy.client.myInvites.accept(again.uuid).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 409, code: 'invite_not_pending' });
  });

  it('renames and deletes a team', async () => {
    const { client } = await signedUp('dee');
    const slug = unique('gamma');
    await client.teams.create({ name: 'Gamma', slug });
    const renamed = unique('delta');
    expect(await client.teams.update(slug, { name: 'Delta', slug: renamed })).toMatchObject({ name: 'Delta', slug: renamed });
    await client.teams.delete(renamed);
    expect((await client.teams.list()).data).toEqual([]);
  });

  it('walks every page with the iterator, one request per page', async () => {
    const { requests, fetch } = recordingFetch();
    const { client } = await signedUp('eve', { fetch });
    const slugs = [unique('p1'), unique('p2'), unique('p3')] as const;
    for (const slug of slugs) await client.teams.create({ name: slug, slug });

    const first = await client.teams.list({ limit: 1 });
    expect(first.data.map((t) => t.slug)).toEqual([slugs[0]]);
    expect(first.next).toEqual(expect.any(String));

    requests.length = 0;
    const seen: Team[] = [];
    for await (const team of client.teams.all({ limit: 1 })) seen.push(team);
    expect(seen.map((t) => t.slug)).toEqual(slugs);
    // No Link on the exact last page, so no empty page is fetched.
    expect(requests.filter((r) => r.path === '/api/teams')).toHaveLength(3);

    const members = [];
    for await (const member of client.members.all(slugs[0], { limit: 1 })) members.push(member);
    expect(members).toHaveLength(1);
  });
});

describe('errors', () => {
  it('throws a RosterError whose code narrows to the documented ones', async () => {
    const { client } = await signedUp('fay');
    const slug = unique('taken');
    await client.teams.create({ name: 'Taken', slug });
    const error = await client.teams.create({ name: 'Again', slug }).catch((e: unknown) => e);
    if (!(error instanceof RosterError) || error.code !== 'slug_taken') throw error;
    expectTypeOf(error.code).toEqualTypeOf<'slug_taken'>();
    expect(error.status).toBe(409);
    expect(error.message).toEqual(expect.any(String));
    expect(error.requestId).toEqual(expect.any(String));
  });

  it('carries the message of each invalid field on 422', async () => {
    const { client } = await signedUp('gus');
    const error = await client.teams.create({ name: ' ', slug: 'Not A Slug' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RosterError);
    expect(error).toMatchObject({ status: 422, code: 'validation_failed' });
    expect(Object.keys((error as RosterError).fields ?? {}).sort()).toEqual(['name', 'slug']);
  });

  it('gives Retry-After as retryAfter on 429', async () => {
    const { email } = await signedUp('hal');
    const client = newClient();
    let error: unknown;
    // Five wrong passwords are free; the next attempt must wait (README, brute-force protection).
    for (let attempt = 0; attempt < 7 && !(error instanceof RosterError && error.status === 429); attempt++) {
      error = await client.auth.signIn({ email, password: `not ${PASSWORD}` }).catch((e: unknown) => e);
    }
    expect(error).toMatchObject({ status: 429, code: 'rate_limited' });
    expect((error as RosterError).retryAfter).toBeGreaterThanOrEqual(1);
  });

  it('answers 401 invalid_credentials to a wrong password', async () => {
    const { email } = await signedUp('ida');
    const error = await newClient()
      .auth.signIn({ email, password: 'wrong password' })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 401, code: 'invalid_credentials' });
  });
});
