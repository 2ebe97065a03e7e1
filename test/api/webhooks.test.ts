/**
 * Webhook endpoints (lib/events/webhooks/endpoints.ts, docs/webhooks.md) through the local server against
 * DynamoDB Local: registration and its secret shown once, who may manage them, the URL refusals
 * (literal addresses, and `localhost` through the real resolver: no other name resolves offline),
 * the per-team limit under racing requests, deletion and paging. WEBHOOKS_ALLOW_PRIVATE_URLS is
 * unset here, as deployed; test/unit/webhooks.test.ts covers delivery with it set.
 */
import { describe, expect, it } from 'vitest';
import { AUDIT_ACTIONS } from '#lib/db/entities/audit-actions.ts';
import { db } from '#lib/db/service.ts';
import { cleanUpTeam } from '#lib/teams/cleanup.ts';
import { type TestUser, addMember, createTeam, signUp, useApi } from '../helpers/api.ts';

const api = useApi();

const EVENTS = ['member.role_changed', 'member.removed'];

const register = (user: TestUser, slug: string, json: unknown, headers?: Record<string, string>) =>
  api.call('POST', `/api/teams/${slug}/webhooks`, { token: user.token, json, ...(headers ? { headers } : {}) });

const list = (user: TestUser, slug: string, query = '') => api.call('GET', `/api/teams/${slug}/webhooks${query}`, { token: user.token });

/** An owner with a fresh team. */
const ownTeam = async () => {
  const owner = await signUp(api, 'owner');
  const team = await createTeam(api, owner);
  return { owner, team };
};

describe('webhook endpoints', () => {
  it('registers an endpoint, shows its secret once, lists it without, and deletes it', async () => {
    const { owner, team } = await ownTeam();
    const created = await register(owner, team.slug, { url: 'https://1.1.1.1/hooks/roster?team=acme', events: EVENTS });
    expect(created.status).toBe(201);
    const endpoint = created.body.data;
    expect(endpoint).toEqual({
      id: expect.any(Number),
      url: 'https://1.1.1.1/hooks/roster?team=acme',
      events: EVENTS,
      createdBy: { userId: expect.any(Number) },
      createdAt: expect.any(String),
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
    });
    // Stored as issued: delivery signs with it.
    const db = await (api.table as NonNullable<typeof api.table>)();
    const stored = await db.entities.webhookEndpoint.get({ teamId: team.id, endpointId: endpoint.id }).go();
    expect(stored.data?.secret).toBe(endpoint.secret);

    const listed = await list(owner, team.slug);
    expect(listed.status).toBe(200);
    const { secret, ...shown } = endpoint;
    expect(secret).toBeDefined();
    expect(listed.body.data).toEqual([shown]);
    expect(JSON.stringify(listed.body)).not.toContain('whsec_');

    const deleted = await api.call('DELETE', `/api/teams/${team.slug}/webhooks/${endpoint.id}`, { token: owner.token });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ data: {} });
    expect((await list(owner, team.slug)).body.data).toEqual([]);
    expect((await api.call('DELETE', `/api/teams/${team.slug}/webhooks/${endpoint.id}`, { token: owner.token })).status).toBe(404);
    expect(await db.entities.webhookEndpoint.get({ teamId: team.id, endpointId: endpoint.id }).go()).toMatchObject({ data: null });
  });

  it('is for OWNERs and ADMINs: a MEMBER gets 403, anyone else 404', async () => {
    const { owner, team } = await ownTeam();
    const [admin, member, stranger] = [await signUp(api, 'admin'), await signUp(api, 'member'), await signUp(api, 'stranger')];
    await addMember(api, team.slug, owner, admin, 'ADMIN');
    await addMember(api, team.slug, owner, member, 'MEMBER');
    const body = { url: 'https://8.8.8.8/hook', events: ['team.updated'] };

    const byAdmin = await register(admin, team.slug, body);
    expect(byAdmin.status).toBe(201);
    expect((await list(admin, team.slug)).status).toBe(200);

    const memberTries = await register(member, team.slug, body);
    expect(memberTries.status).toBe(403);
    expect(memberTries.body.error.code).toBe('forbidden');
    expect((await list(member, team.slug)).status).toBe(403);
    const memberDeletes = await api.call('DELETE', `/api/teams/${team.slug}/webhooks/${byAdmin.body.data.id}`, { token: member.token });
    expect(memberDeletes.status).toBe(403);

    for (const res of [
      await register(stranger, team.slug, body),
      await list(stranger, team.slug),
      await api.call('DELETE', `/api/teams/${team.slug}/webhooks/${byAdmin.body.data.id}`, { token: stranger.token }),
    ]) {
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('not_found');
    }
    // An endpoint of another team is not found through this one.
    const other = await createTeam(api, stranger);
    expect((await api.call('DELETE', `/api/teams/${other.slug}/webhooks/${byAdmin.body.data.id}`, { token: stranger.token })).status).toBe(
      404,
    );
    expect((await list(owner, team.slug)).body.data).toHaveLength(1);
  });

  it('refuses URLs that are not https, carry credentials, or reach a non-public address, with 422 on url', async () => {
    const { owner, team } = await ownTeam();
    const refusals: [string, string | RegExp][] = [
      ['http://1.1.1.1/hook', 'must be an https:// URL'],
      ['ftp://1.1.1.1/hook', 'must be an https:// URL'],
      ['not a url', 'must be an absolute https:// URL'],
      ['https://user:secret@1.1.1.1/hook', 'must not contain a user name or password'],
      [`https://1.1.1.1/${'a'.repeat(2048)}`, 'must be at most 2048 characters'],
      ['https://127.0.0.1/hook', '127.0.0.1 is loopback: webhooks are sent to public addresses only'],
      ['https://[::1]/hook', '::1 is loopback: webhooks are sent to public addresses only'],
      ['https://[::ffff:127.0.0.1]/hook', /is loopback/],
      ['https://10.1.2.3/hook', '10.1.2.3 is private: webhooks are sent to public addresses only'],
      ['https://192.168.0.10/hook', /is private/],
      ['https://169.254.169.254/latest/meta-data/', '169.254.169.254 is link-local: webhooks are sent to public addresses only'],
      ['https://100.64.0.1/hook', /is shared \(carrier-grade NAT\)/],
      ['https://[fd00::1]/hook', /is unique-local/],
      ['https://0.0.0.0/hook', /is unspecified/],
      ['https://224.0.0.1/hook', /is multicast/],
      ['https://203.0.113.7/hook', /is reserved for documentation/],
      ['https://localhost/hook', /^host localhost resolves to (127\.0\.0\.1|::1), which is loopback/],
      ['https://hooks.example.invalid/hook', /^host hooks\.example\.invalid does not resolve/],
    ];
    for (const [url, message] of refusals) {
      const res = await register(owner, team.slug, { url, events: EVENTS });
      expect(res.status, url).toBe(422);
      expect(res.body.error.code).toBe('validation_failed');
      expect(res.body.error.fields.url, url).toEqual(typeof message === 'string' ? message : expect.stringMatching(message));
    }
    expect((await list(owner, team.slug)).body.data).toEqual([]);
  });

  it('takes 1 or more distinct audit actions as events', async () => {
    const { owner, team } = await ownTeam();
    for (const [events, message] of [
      [[], 'must name at least one event'],
      [['member.removed', 'member.removed'], 'must not name an event twice'],
      // A wrong type is the framework's 400 invalid_body.
      ['member.removed', 'must be an array, not string'],
    ] as const) {
      const res = await register(owner, team.slug, { url: 'https://1.1.1.1/hook', events });
      expect([400, 422]).toContain(res.status);
      expect(JSON.stringify(res.body.error.fields)).toContain(message);
    }
    const unknown = await register(owner, team.slug, { url: 'https://1.1.1.1/hook', events: ['member.exploded'] });
    expect(unknown.status).toBe(422);
    expect(unknown.body.error.fields['events.0']).toMatch(/^must each be one of team\.created/);
    const every = await register(owner, team.slug, {
      url: 'https://1.1.1.1/hook',
      events: [...AUDIT_ACTIONS],
    });
    expect(every.status).toBe(201);
  });

  it('keeps a team to 10 endpoints under racing registrations, and frees a place on delete', async () => {
    const { owner, team } = await ownTeam();
    const race = await Promise.all(
      Array.from({ length: 14 }, (_, n) => register(owner, team.slug, { url: `https://1.1.1.1/hook/${n}`, events: EVENTS })),
    );
    const statuses = race.map((r) => r.status);
    expect(statuses.filter((s) => s === 201).length).toBeLessThanOrEqual(10);
    // Beyond the limit 422; a transaction that lost every retry to the others 409 (nothing written).
    for (const s of statuses) expect([201, 409, 422]).toContain(s);
    // Fill up to the limit whatever the race left.
    let created = statuses.filter((s) => s === 201).length;
    for (; created < 10; created++)
      expect((await register(owner, team.slug, { url: 'https://1.1.1.1/x', events: EVENTS })).status).toBe(201);
    const full = await register(owner, team.slug, { url: 'https://1.1.1.1/x', events: EVENTS });
    expect(full.status).toBe(422);
    expect(full.body.error.message).toBe('A team may have at most 10 webhook endpoints: delete one first.');
    const all = (await list(owner, team.slug)).body.data;
    expect(all).toHaveLength(10);
    expect((await api.call('DELETE', `/api/teams/${team.slug}/webhooks/${all[0].id}`, { token: owner.token })).status).toBe(200);
    expect((await register(owner, team.slug, { url: 'https://1.1.1.1/x', events: EVENTS })).status).toBe(201);
  });

  it('goes, secrets and all, with its team: the team cleanup deletes the endpoints and their count', async () => {
    const { owner, team } = await ownTeam();
    for (let n = 0; n < 3; n++)
      expect((await register(owner, team.slug, { url: `https://1.1.1.1/gone/${n}`, events: EVENTS })).status).toBe(201);
    expect((await api.call('DELETE', `/api/teams/${team.slug}`, { token: owner.token })).status).toBe(200);
    // Run here rather than waiting for the stream: the job's own runs are tested in team-cleanup.test.ts.
    for (let run = 0; run < 20 && !(await cleanUpTeam(db(), team.id, () => true)).done; run++);
    const { webhookEndpoint, webhookCount } = db().entities;
    expect((await webhookEndpoint.query.byTeam({ teamId: team.id }).go({ consistent: true })).data).toEqual([]);
    expect((await webhookCount.get({ teamId: team.id }).go({ consistent: true })).data).toBeNull();
  });

  it('pages the list in creation order', async () => {
    const { owner, team } = await ownTeam();
    const ids: number[] = [];
    for (let n = 0; n < 5; n++) {
      const res = await register(owner, team.slug, { url: `https://1.1.1.1/hook/${n}`, events: EVENTS });
      ids.push(res.body.data.id);
    }
    const seen: number[] = [];
    let next: string | null = `/api/teams/${team.slug}/webhooks?limit=2`;
    let pages = 0;
    while (next) {
      const res = await api.call('GET', next, { token: owner.token });
      expect(res.status).toBe(200);
      seen.push(...res.body.data.map((e: { id: number }) => e.id));
      const link = res.headers.get('link');
      next = link ? new URL(/<([^>]+)>/.exec(link)?.[1] as string).pathname + new URL(/<([^>]+)>/.exec(link)?.[1] as string).search : null;
      pages++;
    }
    expect(pages).toBe(3);
    expect(seen).toEqual(ids);
    const otherTeam = await createTeam(api, owner);
    const page1 = await list(owner, team.slug, '?limit=2');
    const cursor = /cursor=([^&>]+)/.exec(page1.headers.get('link') as string)?.[1] as string;
    // A cursor of one team's list is refused on another's.
    expect((await list(owner, otherTeam.slug, `?limit=2&cursor=${cursor}`)).status).toBe(422);
  });

  it('answers a replayed Idempotency-Key with the first answer, secret included, and registers once', async () => {
    const { owner, team } = await ownTeam();
    const key = { 'idempotency-key': `webhook-${Date.now()}` };
    const body = { url: 'https://1.1.1.1/once', events: EVENTS };
    const first = await register(owner, team.slug, body, key);
    const again = await register(owner, team.slug, body, key);
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect((await list(owner, team.slug)).body.data).toHaveLength(1);
  });
});
