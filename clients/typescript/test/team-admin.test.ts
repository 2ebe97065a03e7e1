import { describe, expect, expectTypeOf, it } from 'vitest';
import { type AuditEntry, type Invite, type RosterClient, RosterError, type Role } from '../src/index.js';
import { only, present, recordingFetch, signedUp, unique } from './helpers.js';

type SignedUp = Awaited<ReturnType<typeof signedUp>>;

/** A new team of `owner`'s, which each of `joiners` joins through an accepted invite with its role. */
const teamWith = async (owner: SignedUp, joiners: [SignedUp, Role][] = []): Promise<string> => {
  const slug = unique('team');
  await owner.client.teams.create({ name: slug, slug });
  for (const [user, role] of joiners) {
    await owner.client.invites.create(slug, { email: user.email, role });
    await user.client.myInvites.accept(only((await user.client.myInvites.list()).data).uuid);
  }
  return slug;
};

/** `email`'s membership of the team: its `id` (the member id) and `userId` (the public user id). */
const member = async (client: RosterClient, slug: string, email: string) =>
  present((await client.members.list(slug)).data.find((m) => m.email === email));

const roles = async (client: RosterClient, slug: string) => (await client.members.list(slug)).data.map((m) => [m.email, m.role]);

/** The RosterError `promise` rejects with (fails the test on anything else). */
const refusal = async (promise: Promise<unknown>): Promise<RosterError> => {
  const error = await promise.then(
    () => new Error('expected a RosterError, got an answer'),
    (e: unknown) => e,
  );
  if (!(error instanceof RosterError)) throw error;
  return error;
};

describe('invites.bulk', () => {
  it('answers one result per row, each succeeding or failing on its own; a retry with its key replays', async () => {
    const ann = await signedUp('ann');
    const slug = await teamWith(ann);
    const grace = `${unique('grace')}@example.com`;
    const rows = [
      { email: grace.toUpperCase(), role: 'ADMIN' as const },
      { email: grace, role: 'MEMBER' as const },
      { email: 'not an address', role: 'MEMBER' as const },
    ];
    const idempotencyKey = crypto.randomUUID();
    const results = await ann.client.invites.bulk(slug, rows, { idempotencyKey });
    expect(results.map((r) => r.status)).toEqual([201, 422, 422]);
    const [first, repeated, invalid] = results;
    if (first?.status !== 201) throw new Error('the first row should be invited');
    expectTypeOf(first.invite).toEqualTypeOf<Invite>();
    expect(first).toMatchObject({ email: grace, invite: { email: grace, role: 'ADMIN', status: 'PENDING', team: { slug } } });
    expect(repeated).toMatchObject({ email: grace, code: 'validation_failed', fields: { email: expect.any(String) } });
    expect(invalid).toMatchObject({ status: 422, code: 'validation_failed', fields: { email: expect.any(String) } });

    expect(await ann.client.invites.bulk(slug, rows, { idempotencyKey })).toEqual(results);
    expect(only((await ann.client.invites.list(slug)).data)).toEqual(first.invite);
  });

  it('is refused whole with a typed 403 for a MEMBER', async () => {
    const ann = await signedUp('ann');
    const bob = await signedUp('bob');
    const slug = await teamWith(ann, [[bob, 'MEMBER']]);
    const error = await refusal(bob.client.invites.bulk(slug, [{ email: `${unique('x')}@example.com`, role: 'MEMBER' }]));
    expect(error).toMatchObject({ status: 403, code: 'forbidden' });
    expect((await ann.client.invites.list(slug)).data).toEqual([]);
  });
});

describe('transfers', () => {
  it('hands ownership over on the nominee’s accept; decline and cancel change nothing; others get 403', async () => {
    const ann = await signedUp('ann');
    const bob = await signedUp('bob');
    const cy = await signedUp('cy');
    const slug = await teamWith(ann, [
      [bob, 'MEMBER'],
      [cy, 'MEMBER'],
    ]);
    const bobId = (await member(ann.client, slug, bob.email)).id;

    const transfer = await ann.client.transfers.nominate(slug, bobId, { idempotencyKey: crypto.randomUUID() });
    expect(transfer).toMatchObject({
      team: { slug },
      nominee: { memberId: bobId, email: bob.email },
      nominatedBy: { userId: (await member(ann.client, slug, ann.email)).userId, email: ann.email },
    });
    expect(Date.parse(transfer.expiresAt)).toBeGreaterThan(Date.parse(transfer.createdAt));

    const wrongUser = await refusal(cy.client.transfers.accept(slug));
    if (wrongUser.code !== 'forbidden') throw wrongUser;
    expectTypeOf(wrongUser.code).toEqualTypeOf<'forbidden'>();
    expect(wrongUser.status).toBe(403);

    await bob.client.transfers.accept(slug);
    expect(await roles(ann.client, slug)).toEqual([
      [ann.email, 'ADMIN'],
      [bob.email, 'OWNER'],
      [cy.email, 'MEMBER'],
    ]);

    const cyId = (await member(bob.client, slug, cy.email)).id;
    await bob.client.transfers.nominate(slug, cyId);
    await cy.client.transfers.decline(slug);
    await bob.client.transfers.nominate(slug, cyId);
    await bob.client.transfers.cancel(slug);
    expect(await refusal(cy.client.transfers.accept(slug))).toMatchObject({ status: 404, code: 'not_found' });
    expect((await roles(ann.client, slug)).map(([, role]) => role)).toEqual(['ADMIN', 'OWNER', 'MEMBER']);
  });
});

describe('audit', () => {
  it('lists the log newest first and walks every page of a filter, keeping `action` on each page', async () => {
    const { requests, fetch } = recordingFetch();
    const ann = await signedUp('ann', { fetch });
    const bob = await signedUp('bob');
    const slug = await teamWith(ann, [[bob, 'MEMBER']]);
    const invited = [`${unique('i1')}@example.com`, `${unique('i2')}@example.com`, `${unique('i3')}@example.com`];
    for (const email of invited) await ann.client.invites.create(slug, { email, role: 'MEMBER' });
    const [annMember, bobMember] = [await member(ann.client, slug, ann.email), await member(ann.client, slug, bob.email)];
    await ann.client.members.updateRole(slug, bobMember.id, 'ADMIN');

    const newest = await ann.client.audit.list(slug, { limit: 2 });
    expect(newest.data.map((e) => e.action)).toEqual(['member.role_changed', 'invite.created']);
    expect(newest.next).toEqual(expect.any(String));
    expect(newest.data[0]).toMatchObject({
      actor: { userId: annMember.userId, email: ann.email },
      target: { type: 'member', id: bobMember.id, userId: bobMember.userId },
      changes: { role: { before: 'MEMBER', after: 'ADMIN' } },
      requestId: expect.any(String),
    });

    requests.length = 0;
    const seen: AuditEntry[] = [];
    for await (const entry of ann.client.audit.all(slug, { action: 'invite.created', limit: 1 })) seen.push(entry);
    // Bob's invite first, then the three: newest first.
    expect(seen.map((e) => e.target.email)).toEqual([...[...invited].reverse(), bob.email]);
    expect(new Set(seen.map((e) => e.action))).toEqual(new Set(['invite.created']));
    const pages = requests.filter((r) => r.path === `/api/teams/${slug}/audit`);
    expect(pages.length).toBeGreaterThanOrEqual(4);
    for (const page of pages) expect(page.query.get('action')).toBe('invite.created');
    expect(pages.slice(1).every((page) => page.query.has('cursor'))).toBe(true);
  });

  it('answers a MEMBER with a typed 403 forbidden', async () => {
    const ann = await signedUp('ann');
    const bob = await signedUp('bob');
    const slug = await teamWith(ann, [[bob, 'MEMBER']]);
    const error = await refusal(bob.client.audit.list(slug));
    if (error.code !== 'forbidden') throw error;
    expectTypeOf(error.code).toEqualTypeOf<'forbidden'>();
    expect(error.status).toBe(403);
  });
});

describe('webhooks', () => {
  it('registers an endpoint with its one-time secret, lists it without, and deletes it', async () => {
    const ann = await signedUp('ann');
    const slug = await teamWith(ann);
    const body = { url: 'https://1.1.1.1/hook', events: ['member.role_changed' as const, 'member.removed' as const] };
    const idempotencyKey = crypto.randomUUID();
    const created = await ann.client.webhooks.create(slug, body, { idempotencyKey });
    const createdBy = { userId: (await member(ann.client, slug, ann.email)).userId };
    expect(created).toMatchObject({ ...body, createdBy, secret: expect.stringMatching(/^whsec_/) });
    // A retry with the key gets the same answer, secret included, and registers nothing more.
    expect(await ann.client.webhooks.create(slug, body, { idempotencyKey })).toEqual(created);

    const listed = { id: created.id, url: body.url, events: body.events, createdBy, createdAt: created.createdAt };
    expect(await ann.client.webhooks.list(slug)).toEqual({ data: [listed], next: null });
    const all = [];
    for await (const endpoint of ann.client.webhooks.all(slug, { limit: 1 })) all.push(endpoint);
    expect(all).toEqual([listed]);

    await ann.client.webhooks.delete(slug, created.id);
    expect((await ann.client.webhooks.list(slug)).data).toEqual([]);
    expect(await refusal(ann.client.webhooks.delete(slug, created.id))).toMatchObject({ status: 404, code: 'not_found' });
  });

  it('refuses a loopback URL with a typed 422 on `url`', async () => {
    const ann = await signedUp('ann');
    const slug = await teamWith(ann);
    const error = await refusal(ann.client.webhooks.create(slug, { url: 'https://127.0.0.1/hook', events: ['team.updated'] }));
    if (error.code !== 'validation_failed') throw error;
    expect(error.status).toBe(422);
    expect(error.fields?.url).toMatch(/loopback/);
    expect((await ann.client.webhooks.list(slug)).data).toEqual([]);
  });
});
