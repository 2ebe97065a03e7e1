/**
 * The sweep of webhook events whose fan-out was lost (lib/events/webhooks/sweep.ts), against
 * DynamoDB Local through the local server, the stream's reader and the local queues as deployed
 * (infra/local-background.ts), with a receiver on 127.0.0.1. The reader here loses every audit
 * entry's INSERT of the teams in `lossy`, as a stream or a work queue that gave up would: only the
 * sweep gets those events out. The sweep runs at a chosen `now` (WEBHOOK_SWEEP.settleSeconds and
 * the watermark are what the tests walk through).
 */
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { randomUUIDv7 } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { LocalBackground } from '#infra/local-background.ts';
import { addDays, expirySeconds, isoMillis } from '#lib/core/time.ts';
import { uuidV7Floor } from '#lib/core/uuid-v7.ts';
import { db } from '#lib/db/service.ts';
import { dispatch } from '#lib/events/stream-dispatch.ts';
import { webhookQueue } from '#lib/events/webhooks/queue.ts';
import { sweepWebhookEvents } from '#lib/events/webhooks/sweep.ts';
import { WEBHOOK_SWEEP } from '#lib/http/background.ts';
import { type TestUser, createTeam, signUp, useApi } from '../helpers/api.ts';
import { type Received, receiver } from '../helpers/receiver.ts';
import { until } from '../helpers/until.ts';

vi.hoisted(() => {
  process.env.WEBHOOKS_ALLOW_PRIVATE_URLS = 'true';
});

const api = useApi();
let background: LocalBackground;
/** Teams whose audit entries' INSERTs the reader drops. */
const lossy = new Set<number>();
/** The entry ids it dropped. */
const lost = new Set<string>();

const hook = receiver((_req: Received, res) => res.writeHead(204).end());
let paths = 0;
const receivedAt = (p: string) => hook.received.filter((r) => r.url === p);
const idsAt = (p: string) => receivedAt(p).map((r) => String(r.headers['webhook-id']));

beforeAll(async () => {
  await new Promise<void>((resolve) => hook.server.listen(0, '127.0.0.1', resolve));
  const { startLocalBackground } = await import('#infra/local-background.ts');
  background = await startLocalBackground({
    pollMs: 50,
    queues: { webhook: { pollMs: 20 }, fanout: { pollMs: 20 } },
    handler: (event: DynamoDBStreamEvent) => {
      const kept = event.Records.filter((r) => {
        const image = r.dynamodb?.NewImage;
        const isLost = r.eventName === 'INSERT' && image?.__edb_e__?.S === 'auditEntry' && lossy.has(Number(image.teamId?.N));
        if (isLost) lost.add(String(image?.entryId?.S));
        return !isLost;
      });
      return dispatch(kept);
    },
  });
});
afterAll(async () => {
  await background.stop();
  hook.server.closeAllConnections();
  await new Promise((resolve) => hook.server.close(resolve));
});

/** Waits until the fan-out and webhook queues hold nothing: every message sent is delivered. */
const drained = () =>
  until('the queues drained', () => background.queue('fanout').size() === 0 && background.queue('webhook').size() === 0);

const SETTLED_MS = (WEBHOOK_SWEEP.settleSeconds + 1) * 1000;
/** A sweep run at `at` with all the time it wants. */
const sweep = (at: Date, mayGoOn = () => true) => sweepWebhookEvents(db(), webhookQueue, at, mayGoOn);
const watermark = async (teamId: number) => (await db().entities.webhookCount.get({ teamId }).go({ consistent: true })).data?.sweepFrom;

/** A fresh receiver path, and an endpoint of the team there for `events`. */
const endpoint = async (owner: TestUser, slug: string, events: string[]) => {
  const p = `/sweep/${++paths}`;
  const res = await api.call('POST', `/api/teams/${slug}/webhooks`, { token: owner.token, json: { url: hook.url(p), events } });
  expect(res.status).toBe(201);
  return { path: p, id: (res.body.data as { id: number }).id };
};

const rename = async (owner: TestUser, slug: string, name: string) => {
  const res = await api.call('PUT', `/api/teams/${slug}`, { token: owner.token, json: { name, slug } });
  expect(res.status).toBe(200);
};

/** A `team.updated` audit entry as the API records one, to write straight to the table (the reader drops its INSERT). */
const renameEntry = (teamId: number, actorEmail: string, entryId: string, createdAt: Date) => ({
  teamId,
  entryId,
  action: 'team.updated' as const,
  createdAt: isoMillis(createdAt),
  actorUserId: 1,
  actorEmail,
  targetType: 'team' as const,
  targetId: teamId,
  changes: '{}',
  ttl: expirySeconds(addDays(createdAt, 300)),
});

/** The team's audit entries of `action`, oldest first. */
const entries = async (teamId: number, action: string) =>
  (await db().entities.auditEntry.query.byTeam({ teamId }).go({ pages: 'all' })).data
    .filter((e) => e.action === action)
    .map((e) => e.entryId);

/**
 * A lossy team with an endpoint for renames, and `count` renames as the API would record them,
 * written straight to the table; returns once the reader has dropped them all.
 */
const lostBacklog = async (label: string, count: number) => {
  const owner = await signUp(api, label);
  const team = await createTeam(api, owner);
  const hooked = await endpoint(owner, team.slug, ['team.updated']);
  lossy.add(team.id);
  const at = new Date(Date.now() + 1000);
  const written = Array.from({ length: count }, () => renameEntry(team.id, owner.email, randomUUIDv7(), at));
  expect((await db().entities.auditEntry.put(written).go()).unprocessed).toEqual([]);
  await until('the reader dropped them', () => written.every((e) => lost.has(e.entryId)));
  return { team, hooked, written };
};

describe('webhook sweep', () => {
  it(
    'sends each lost event once, after it settles, and only to the subscribed endpoints that existed when it happened',
    { timeout: 90_000 },
    async () => {
      const owner = await signUp(api, 'sweep');
      const team = await createTeam(api, owner);
      const early = await endpoint(owner, team.slug, ['team.updated']);
      const other = await endpoint(owner, team.slug, ['invite.created']);
      const startedAt = await watermark(team.id);
      expect(startedAt).toBeDefined();
      lossy.add(team.id);
      await rename(owner, team.slug, 'One');
      await rename(owner, team.slug, 'Two');
      const late = await endpoint(owner, team.slug, ['team.updated']);
      await rename(owner, team.slug, 'Three');
      const renames = await entries(team.id, 'team.updated');
      expect(renames).toHaveLength(3);
      await until('the reader dropped the renames', () => renames.every((id) => lost.has(id)));
      await drained();
      expect(receivedAt(early.path)).toEqual([]);

      // Too recent: left for the stream, and the watermark stays.
      const now = new Date();
      expect(await sweep(now)).toMatchObject({ messages: 0, caughtUp: true });
      expect(await watermark(team.id)).toBe(startedAt);

      // Settled: every rename to the endpoint that existed then; the last one also to the late endpoint.
      const later = new Date(now.getTime() + SETTLED_MS);
      const swept = await sweep(later);
      expect(swept).toMatchObject({ sent: 3, messages: 4, failed: 0, caughtUp: true });
      expect(swept.teams).toBeGreaterThanOrEqual(1);
      await drained();
      expect(idsAt(early.path).sort()).toEqual([...renames].sort());
      expect(idsAt(late.path)).toEqual([renames[2]]);
      expect(receivedAt(other.path)).toEqual([]);
      expect(await watermark(team.id)).toBe(isoMillis(new Date(later.getTime() - WEBHOOK_SWEEP.settleSeconds * 1000)));

      // Again, and again an hour on: nothing twice.
      await sweep(later);
      await sweep(new Date(later.getTime() + 3_600_000));
      await drained();
      expect(idsAt(early.path)).toHaveLength(3);
      expect(idsAt(late.path)).toHaveLength(1);
    },
  );

  it('leaves alone what the stream sent: the receipt says so', { timeout: 60_000 }, async () => {
    const owner = await signUp(api, 'stream');
    const team = await createTeam(api, owner);
    const hooked = await endpoint(owner, team.slug, ['team.updated']);
    await rename(owner, team.slug, 'Streamed');
    await until('the stream delivered the rename', () => receivedAt(hooked.path).length === 1);
    const [entryId] = await entries(team.id, 'team.updated');
    const receipt = await db()
      .entities.webhookFanout.get({ teamId: team.id, entryId: entryId as string })
      .go({ consistent: true });
    expect(receipt.data?.ttl).toBeGreaterThan(expirySeconds(addDays(new Date(), 29)));

    const swept = await sweep(new Date(Date.now() + SETTLED_MS));
    await drained();
    expect(swept).toMatchObject({ sent: 0, messages: 0 });
    expect(idsAt(hooked.path)).toEqual([entryId]);
  });

  it(
    'goes through a long backlog over several runs, each cut short after a page, and sends each event once',
    { timeout: 120_000 },
    async () => {
      const { team, hooked, written } = await lostBacklog('backlog', 250);

      const later = new Date(Date.now() + SETTLED_MS);
      // One page of a team a run, as a run whose time ran out would end: 100 entries, 100, then 50.
      const runs = [];
      for (let run = 0; run < 10; run++) {
        const result = await sweepWebhookEvents(db(), webhookQueue, later, () => true, { pagesPerTeam: 1 });
        runs.push(result);
        if (result.caughtUp) break;
      }
      expect(runs.map((r) => r.caughtUp)).toEqual([false, false, true]);
      expect((await db().entities.webhookCount.get({ teamId: team.id }).go({ consistent: true })).data?.sweepAfter).toBeUndefined();
      expect(runs.at(-1)?.caughtUp).toBe(true);
      await drained();
      const ids = idsAt(hooked.path);
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids.sort()).toEqual(written.map((e) => e.entryId).sort());
    },
  );

  it('moves the watermark of a team without endpoints once a day, and a new endpoint keeps it', { timeout: 60_000 }, async () => {
    const owner = await signUp(api, 'none');
    const team = await createTeam(api, owner);
    const gone = await endpoint(owner, team.slug, ['team.updated']);
    expect((await api.call('DELETE', `/api/teams/${team.slug}/webhooks/${gone.id}`, { token: owner.token })).status).toBe(200);
    const from = (await watermark(team.id)) as string;
    expect((await db().entities.webhookCount.get({ teamId: team.id }).go({ consistent: true })).data?.endpoints).toBe(0);

    await sweep(new Date(Date.parse(from) + SETTLED_MS + 3_600_000));
    expect(await watermark(team.id)).toBe(from);
    const dayOn = new Date(Date.parse(from) + SETTLED_MS + 86_400_000 + 1000);
    await sweep(dayOn);
    expect(await watermark(team.id)).toBe(isoMillis(new Date(dayOn.getTime() - WEBHOOK_SWEEP.settleSeconds * 1000)));

    // A new endpoint keeps the moved watermark (the first create's only).
    const again = await endpoint(owner, team.slug, ['team.updated']);
    expect(again.id).toBeGreaterThan(0);
    expect(await watermark(team.id)).toBe(isoMillis(new Date(dayOn.getTime() - WEBHOOK_SWEEP.settleSeconds * 1000)));
  });

  /** Renames of a fresh lossy team with an endpoint for them: the team and its endpoint's path. */
  const lostRenames = async (label: string, count: number) => {
    const owner = await signUp(api, label);
    const team = await createTeam(api, owner);
    const hooked = await endpoint(owner, team.slug, ['team.updated']);
    lossy.add(team.id);
    for (let n = 0; n < count; n++) await rename(owner, team.slug, `${label} ${n}`);
    const renames = await entries(team.id, 'team.updated');
    await until('the reader dropped the renames', () => renames.every((id) => lost.has(id)));
    return { team, path: hooked.path, renames };
  };

  it('goes on past a team whose sweep fails, and sends that team at the next run', { timeout: 60_000 }, async () => {
    const failing = await lostRenames('failing', 2);
    const fine = await lostRenames('fine', 2);
    const later = new Date(Date.now() + SETTLED_MS);
    // The queue refuses the failing team's messages, as SQS out of reach would.
    const refusing = () => {
      const real = webhookQueue();
      return {
        ...real,
        send: (orders: Parameters<typeof real.send>[0]) =>
          orders.some((o) => o.teamId === failing.team.id) ? Promise.reject(new Error('queue unreachable')) : real.send(orders),
      };
    };
    const first = await sweepWebhookEvents(db(), refusing, later, () => true);
    expect(first.failed).toBe(1);
    await drained();
    expect(idsAt(fine.path).sort()).toEqual([...fine.renames].sort());
    expect(receivedAt(failing.path)).toEqual([]);

    const second = await sweep(later);
    expect(second).toMatchObject({ sent: 2, failed: 0 });
    await drained();
    expect(idsAt(failing.path).sort()).toEqual([...failing.renames].sort());
    expect(idsAt(fine.path)).toHaveLength(2);
  });

  it('goes on to the next team when one reaches its page cap: a long backlog holds no one back', { timeout: 60_000 }, async () => {
    const { team, hooked } = await lostBacklog('capped', 150);
    const after = await lostRenames('aftercap', 1);
    expect(after.team.id).toBeGreaterThan(team.id);

    const later = new Date(Date.now() + SETTLED_MS);
    const run = await sweepWebhookEvents(db(), webhookQueue, later, () => true, { pagesPerTeam: 1 });
    expect(run.caughtUp).toBe(false);
    await drained();
    expect(idsAt(after.path)).toEqual(after.renames);
    // One page of 100 entries (the endpoint's own webhook.created among them, not subscribed).
    expect(idsAt(hooked.path).length).toBeGreaterThanOrEqual(99);
    expect(idsAt(hooked.path).length).toBeLessThan(150);
    await sweepWebhookEvents(db(), webhookQueue, later, () => true, { pagesPerTeam: 1 });
    await drained();
    expect(new Set(idsAt(hooked.path)).size).toBe(150);
  });

  it('when its time runs out between teams, starts the next run after the last team it finished', { timeout: 60_000 }, async () => {
    const first = await lostRenames('first', 1);
    const second = await lostRenames('second', 1);
    expect(second.team.id).toBeGreaterThan(first.team.id);
    const later = new Date(Date.now() + SETTLED_MS);
    // The time runs out as soon as the first team's messages are out.
    let out = false;
    const watching = () => {
      const real = webhookQueue();
      return {
        ...real,
        send: async (orders: Parameters<typeof real.send>[0]) => {
          await real.send(orders);
          if (orders.some((o) => o.teamId === first.team.id)) out = true;
        },
      };
    };
    const cut = await sweepWebhookEvents(db(), watching, later, () => !out);
    expect(cut.caughtUp).toBe(false);
    const place = await db().entities.webhookSweep.get({ sweep: 'webhooks' }).go({ consistent: true });
    expect(place.data?.resumeAfter).toBe(first.team.id);
    await drained();
    expect(receivedAt(second.path)).toEqual([]);

    // The next run starts with the second team; the first is not sent again.
    const next = await sweep(later);
    expect(next.caughtUp).toBe(true);
    await drained();
    expect(idsAt(second.path)).toEqual(second.renames);
    expect(idsAt(first.path)).toEqual(first.renames);
  });

  it('reads no further back than the receipts last: an older entry cannot be told from one sent', { timeout: 60_000 }, async () => {
    const owner = await signUp(api, 'horizon');
    const team = await createTeam(api, owner);
    const hooked = await endpoint(owner, team.slug, ['team.updated']);
    lossy.add(team.id);
    const now = new Date();
    // Entries whose ids date from 40 and 10 days ago (as after a sweep stopped for weeks), the watermark before both.
    const aged = (days: number) =>
      renameEntry(
        team.id,
        owner.email,
        `${uuidV7Floor(addDays(now, -days))}-7000-8000-${String(days).padStart(12, '0')}`,
        new Date(now.getTime() + 1000),
      );
    const [old, recent] = [aged(40), aged(10)];
    await db().entities.auditEntry.put([old, recent]).go();
    await db()
      .entities.webhookCount.patch({ teamId: team.id })
      .set({ sweepFrom: isoMillis(addDays(now, -50)) })
      .go();
    await sweep(new Date(now.getTime() + SETTLED_MS));
    await drained();
    expect(idsAt(hooked.path)).toEqual([recent.entryId]);
  });
});
