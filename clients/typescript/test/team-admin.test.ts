import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  type AuditEntry,
  type Invite,
  type RosterClient,
  RosterError,
  type Role,
  type WebhookDelivery,
  type WebhookReplay,
} from '../src/index.js';
import { eventually, only, present, recordingFetch, signedUp, unique } from './helpers.js';

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

/** A webhook URL on this machine where nothing listens (the test server allows loopback): every attempt is refused at once. */
const HOOK = 'http://127.0.0.1:9/hook';

describe('webhooks', () => {
  it('registers an endpoint with its one-time secret, lists it without, and deletes it', async () => {
    const ann = await signedUp('ann');
    const slug = await teamWith(ann);
    const body = { url: HOOK, events: ['member.role_changed' as const, 'member.removed' as const] };
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

  it('refuses a private URL with a typed 422 on `url`', async () => {
    const ann = await signedUp('ann');
    const slug = await teamWith(ann);
    const error = await refusal(ann.client.webhooks.create(slug, { url: 'https://10.0.0.7/hook', events: ['team.updated'] }));
    if (error.code !== 'validation_failed') throw error;
    expect(error.status).toBe(422);
    expect(error.fields?.url).toMatch(/private/);
    expect((await ann.client.webhooks.list(slug)).data).toEqual([]);
  });

  // The test server is `npm start` (test/global-setup.ts): its stream pollers fan each event out to
  // its in-process queue, whose delivery function makes the attempt and logs it. Nothing listens on
  // HOOK's port: each attempt is refused at once and logged with its next attempt 5 s later.
  it('logs each attempt newest first, pages the log, and replays a logged event with its key', { timeout: 90_000 }, async () => {
    const ann = await signedUp('ann');
    const slug = await teamWith(ann);
    const endpoint = await ann.client.webhooks.create(slug, { url: HOOK, events: ['team.updated'] });
    expect(await ann.client.webhooks.deliveries(slug, endpoint.id)).toEqual({ data: [], next: null });

    await ann.client.teams.update(slug, { name: 'First', slug });
    await ann.client.teams.update(slug, { name: 'Second', slug });
    const events = (await ann.client.audit.list(slug, { action: 'team.updated' })).data.map((e) => e.id);
    expect(events).toHaveLength(2);

    const attempted = (page: { data: WebhookDelivery[] }) => events.every((id) => page.data.some((d) => d.eventId === id));
    const log = await eventually('a logged attempt of each event', () => ann.client.webhooks.deliveries(slug, endpoint.id), attempted);
    expectTypeOf(log.data).toEqualTypeOf<WebhookDelivery[]>();
    expect(log.next).toBeNull();
    const ids = log.data.map((d) => d.id);
    // Newest first: the ids are UUIDv7s, ordered by time.
    expect(ids).toEqual([...ids].sort().reverse());
    for (const delivery of log.data) {
      expect(delivery).toEqual({
        id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/),
        eventId: expect.toBeOneOf(events),
        event: 'team.updated',
        attempt: expect.any(Number),
        replay: false,
        succeeded: false,
        responseStatus: delivery.responseStatus === null ? null : expect.any(Number),
        error: expect.any(String),
        durationMs: expect.any(Number),
        createdAt: new Date(delivery.createdAt).toISOString(),
        nextAttemptAt: delivery.nextAttemptAt === null ? null : new Date(delivery.nextAttemptAt).toISOString(),
      });
      expect(delivery.attempt).toBeGreaterThanOrEqual(1);
      expect(delivery.durationMs).toBeGreaterThanOrEqual(0);
    }
    // A first attempt that failed is retried 5 s after it ended.
    const first = present(log.data.find((d) => d.attempt === 1 && d.eventId === events[0]));
    const due = Date.parse(present(first.nextAttemptAt)) - Date.parse(first.createdAt) - first.durationMs;
    expect(due).toBeGreaterThanOrEqual(5_000);
    expect(due).toBeLessThan(6_000);

    const page1 = await ann.client.webhooks.deliveries(slug, endpoint.id, { limit: 1 });
    expect(page1.data).toHaveLength(1);
    const page2 = await ann.client.webhooks.deliveries(slug, endpoint.id, { limit: 1, cursor: present(page1.next) });
    expect(only(page2.data).id < only(page1.data).id).toBe(true);
    const walked: WebhookDelivery[] = [];
    for await (const delivery of ann.client.webhooks.allDeliveries(slug, endpoint.id, { limit: 1 })) walked.push(delivery);
    // Retries may be logged meanwhile, ahead of the first page: what was there is still walked, once each.
    expect(new Set(walked.map((d) => d.id)).size).toBe(walked.length);
    expect(walked.map((d) => d.id)).toEqual(expect.arrayContaining(ids));

    const idempotencyKey = crypto.randomUUID();
    const replayed = await ann.client.webhooks.replay(slug, endpoint.id, first.id, { idempotencyKey });
    expectTypeOf(replayed).toEqualTypeOf<WebhookReplay>();
    expect(replayed).toEqual({ eventId: first.eventId });
    expect(await ann.client.webhooks.replay(slug, endpoint.id, first.id, { idempotencyKey })).toEqual(replayed);
    // The key goes with the request: another replay with it is refused.
    const other = present(log.data.find((d) => d.eventId === events[1]));
    const reused = await refusal(ann.client.webhooks.replay(slug, endpoint.id, other.id, { idempotencyKey }));
    expect(reused).toMatchObject({ status: 422, code: 'idempotency_key_reused' });

    const again = await eventually(
      'a logged attempt of the replay',
      () => ann.client.webhooks.deliveries(slug, endpoint.id),
      (page) => page.data.some((d) => d.replay),
    );
    expect(again.data.filter((d) => d.replay)).toEqual([
      expect.objectContaining({ eventId: first.eventId, event: 'team.updated', attempt: 1, succeeded: false }),
    ]);
  });

  it('answers a MEMBER with a typed 403, and 404 for another team’s endpoint or an unknown delivery', async () => {
    const ann = await signedUp('ann');
    const bob = await signedUp('bob');
    const cy = await signedUp('cy');
    const slug = await teamWith(ann, [[bob, 'MEMBER']]);
    const other = await teamWith(ann);
    const endpoint = await ann.client.webhooks.create(slug, { url: HOOK, events: ['team.updated'] });
    const unknown = crypto.randomUUID();

    const listed = await refusal(bob.client.webhooks.deliveries(slug, endpoint.id));
    if (listed.code !== 'forbidden') throw listed;
    expectTypeOf(listed.code).toEqualTypeOf<'forbidden'>();
    expect(listed.status).toBe(403);
    expect(await refusal(bob.client.webhooks.replay(slug, endpoint.id, unknown))).toMatchObject({ status: 403, code: 'forbidden' });

    const notFound = { status: 404, code: 'not_found' };
    expect(await refusal(cy.client.webhooks.deliveries(slug, endpoint.id))).toMatchObject(notFound);
    expect(await refusal(ann.client.webhooks.deliveries(other, endpoint.id))).toMatchObject(notFound);
    expect(await refusal(ann.client.webhooks.replay(other, endpoint.id, unknown))).toMatchObject(notFound);
    expect(await refusal(ann.client.webhooks.replay(slug, endpoint.id, unknown))).toMatchObject(notFound);
    await ann.client.webhooks.delete(slug, endpoint.id);
    expect(await refusal(ann.client.webhooks.deliveries(slug, endpoint.id))).toMatchObject(notFound);
  });
});
