/**
 * Webhook delivery end to end (docs/webhooks.md), through the local server against DynamoDB Local:
 * a change writes its audit entry, the table's stream feeds the fan-out (infra/stream-poller.ts),
 * which queues one message per subscribed endpoint on the local queue (infra/local-queue.ts), whose
 * delivery function POSTs it to a receiver on 127.0.0.1 (WEBHOOKS_ALLOW_PRIVATE_URLS=true, as
 * locally). Signatures are checked with the `standardwebhooks` package. The retry schedule runs
 * 10,000 times faster (timeScale): its 28 hours in about 10 seconds.
 */
import type { DynamoDBRecord, SQSRecord } from 'aws-lambda';
import type { ServerResponse } from 'node:http';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { LocalQueue } from '#infra/local-queue.ts';
import type { LocalBackground } from '#infra/local-background.ts';
import type { DeliveryOrder } from '#lib/events/webhooks/queue.ts';
import { WEBHOOK_ATTEMPTS } from '#lib/http/background.ts';
import { DELIVERY_TIMEOUT_MS } from '#lib/events/webhooks/deliver.ts';
import { type TestUser, addMember, createTeam, signUp, useApi } from '../helpers/api.ts';
import { queuedEvent } from '../helpers/queued.ts';
import { type Received, receiver } from '../helpers/receiver.ts';
import { until } from '../helpers/until.ts';

vi.hoisted(() => {
  process.env.WEBHOOKS_ALLOW_PRIVATE_URLS = 'true';
  process.env.WEBHOOK_REPLAYS_PER_TEAM_HOUR = '3';
});

const api = useApi();
let background: LocalBackground;
/** The webhook queue: the background's, or the one a test started in its place. */
let queue: LocalQueue;
/** Its retries' delays in tenths of a millisecond: the 28-hour schedule in seconds. */
const WEBHOOK_QUEUE = { timeScale: 1e-4, pollMs: 20 };
const deadOrders = (): DeliveryOrder[] => queue.deadLetters.map((body) => JSON.parse(body) as DeliveryOrder);

/** What the receiver does with request N of a path (from 0): a status (now or later), or never answer. */
type Script = (n: number) => number | Promise<number> | 'hang';
const scripts = new Map<string, Script>();
const hook = receiver((req: Received, res: ServerResponse) => {
  const script = scripts.get(req.url) ?? (() => 204);
  const n = hook.received.filter((r) => r.url === req.url).length - 1;
  const answer = script(n);
  if (answer !== 'hang') void Promise.resolve(answer).then((status) => res.writeHead(status).end());
});
let paths = 0;
/** A fresh path on the receiver, answering as `script` says. */
const path = (script: Script): string => {
  const p = `/hook/${++paths}`;
  scripts.set(p, script);
  return p;
};
const receivedAt = (p: string) => hook.received.filter((r) => r.url === p);

beforeAll(async () => {
  await new Promise<void>((resolve) => hook.server.listen(0, '127.0.0.1', resolve));
  const { startLocalBackground } = await import('#infra/local-background.ts');
  background = await startLocalBackground({
    pollMs: 50,
    queues: { webhook: WEBHOOK_QUEUE, fanout: { pollMs: 20 } },
  });
  queue = background.queue('webhook');
});
afterAll(async () => {
  await background.stop();
  await queue.stop();
  hook.server.closeAllConnections();
  await new Promise((resolve) => hook.server.close(resolve));
});

/** An owner, a team, and an endpoint at `p` for `events`, with its secret. */
const setUp = async (p: string, events: string[]) => {
  const owner = await signUp(api, 'owner');
  const team = await createTeam(api, owner);
  const created = await api.call('POST', `/api/teams/${team.slug}/webhooks`, { token: owner.token, json: { url: hook.url(p), events } });
  expect(created.status).toBe(201);
  return { owner, team, endpoint: created.body.data as { id: number; secret: string } };
};

const invite = async (owner: TestUser, slug: string, email = `invitee-${Date.now().toString(36)}-${++paths}@example.com`) => {
  const res = await api.call('POST', `/api/teams/${slug}/invites`, { token: owner.token, json: { email, role: 'MEMBER' } });
  expect(res.status).toBe(201);
  return email;
};

const deliveries = (user: TestUser, slug: string, endpointId: number, query = '') =>
  api.call('GET', `/api/teams/${slug}/webhooks/${endpointId}/deliveries${query}`, { token: user.token });

/** The message as the receiver verified it: throws unless the signature holds. */
const verified = (secret: string, r: Received) =>
  new Webhook(secret).verify(r.body, {
    'webhook-id': String(r.headers['webhook-id']),
    'webhook-timestamp': String(r.headers['webhook-timestamp']),
    'webhook-signature': String(r.headers['webhook-signature']),
  }) as { type: string; timestamp: string; data: { id: string; action: string; team: { id: number; slug: string | null } } };

describe('webhook delivery', () => {
  it(
    'retries a receiver that fails, then times out, until it recovers: the same signed event each time, and a log of the three attempts',
    { timeout: 120_000 },
    async () => {
      const p = path((n) => (n === 0 ? 500 : n === 1 ? 'hang' : 204));
      const { owner, team, endpoint } = await setUp(p, ['invite.created']);
      // Not subscribed: the rename is never sent.
      expect(
        (await api.call('PUT', `/api/teams/${team.slug}`, { token: owner.token, json: { name: 'Renamed', slug: team.slug } })).status,
      ).toBe(200);
      const email = await invite(owner, team.slug);

      await until('three attempts', () => receivedAt(p).length >= 3, DELIVERY_TIMEOUT_MS + 30_000);
      const got = receivedAt(p);
      const messages = got.map((r) => verified(endpoint.secret, r));
      expect(messages.map((m) => m.type)).toEqual(['invite.created', 'invite.created', 'invite.created']);
      // One event: one webhook-id, the audit entry's, on every attempt.
      const ids = new Set(got.map((r) => r.headers['webhook-id']));
      expect(ids.size).toBe(1);
      const audit = await api.call('GET', `/api/teams/${team.slug}/audit?action=invite.created`, { token: owner.token });
      const entry = audit.body.data[0];
      expect([...ids]).toEqual([entry.id]);
      expect(messages[0]?.data).toEqual({ ...entry, team: { id: team.id, slug: team.slug } });
      expect(entry.target.email).toBe(email);
      // Another secret does not verify it.
      const other = await setUp(
        path(() => 204),
        ['team.deleted'],
      );
      expect(() => verified(other.endpoint.secret, got[0] as Received)).toThrow();

      await until('the third attempt logged', async () => (await deliveries(owner, team.slug, endpoint.id)).body.data.length === 3);
      const log = (await deliveries(owner, team.slug, endpoint.id)).body.data;
      expect(log).toEqual([
        expect.objectContaining({
          eventId: entry.id,
          event: 'invite.created',
          attempt: 3,
          replay: false,
          succeeded: true,
          responseStatus: 204,
          error: null,
          nextAttemptAt: null,
        }),
        expect.objectContaining({
          attempt: 2,
          succeeded: false,
          responseStatus: null,
          error: `timed out after ${DELIVERY_TIMEOUT_MS} ms`,
          nextAttemptAt: expect.any(String),
        }),
        expect.objectContaining({
          attempt: 1,
          succeeded: false,
          responseStatus: 500,
          error: 'answered 500',
          nextAttemptAt: expect.any(String),
        }),
      ]);
      // The first retry is due 5 seconds after the first attempt ends, the second 5 minutes after the second.
      const [third, second, first] = log as { createdAt: string; nextAttemptAt: string; durationMs: number }[];
      const dueAfter = (d: typeof first) =>
        Date.parse(d?.nextAttemptAt as string) - Date.parse(d?.createdAt as string) - (d?.durationMs ?? 0);
      expect(dueAfter(first)).toBeGreaterThanOrEqual(5000);
      expect(dueAfter(first)).toBeLessThan(5000 + 1000);
      expect(dueAfter(second)).toBeGreaterThanOrEqual(300_000);
      expect(dueAfter(second)).toBeLessThan(300_000 + 1000);
      expect(second?.durationMs).toBeGreaterThanOrEqual(DELIVERY_TIMEOUT_MS - 50);
      expect(third?.durationMs).toBeLessThan(DELIVERY_TIMEOUT_MS);
      // Paged like every list.
      const page = await deliveries(owner, team.slug, endpoint.id, '?limit=2');
      expect(page.body.data).toEqual(log.slice(0, 2));
      expect(page.headers.get('link')).toContain('rel="next"');
      expect(receivedAt(p)).toHaveLength(3);
    },
  );

  it(
    'gives up after the last of the 8 attempts: the message goes to the dead letters, and the log shows each attempt',
    { timeout: 120_000 },
    async () => {
      const p = path(() => 503);
      const { owner, team, endpoint } = await setUp(p, ['invite.created']);
      await invite(owner, team.slug);
      await until('the dead letter', () => deadOrders().some((d) => d.endpointId === endpoint.id));
      expect(receivedAt(p)).toHaveLength(WEBHOOK_ATTEMPTS);
      const log = (await deliveries(owner, team.slug, endpoint.id, '?limit=100')).body.data as {
        attempt: number;
        nextAttemptAt: string | null;
      }[];
      expect(log.map((d) => d.attempt)).toEqual([8, 7, 6, 5, 4, 3, 2, 1]);
      expect(log[0]?.nextAttemptAt).toBeNull();
      expect(log.slice(1).every((d) => d.nextAttemptAt !== null)).toBe(true);
    },
  );

  it(
    'replays a delivery: the same event again to the same endpoint, counted from attempt 1 and marked as a replay',
    { timeout: 60_000 },
    async () => {
      const p = path(() => 200);
      const { owner, team, endpoint } = await setUp(p, ['invite.created']);
      await invite(owner, team.slug);
      await until('the first delivery', () => receivedAt(p).length >= 1);
      const [first] = (await deliveries(owner, team.slug, endpoint.id)).body.data as { id: string; eventId: string }[];
      const replayed = await api.call('POST', `/api/teams/${team.slug}/webhooks/${endpoint.id}/deliveries/${first?.id}/replay`, {
        token: owner.token,
      });
      expect(replayed.status).toBe(200);
      expect(replayed.body).toEqual({ data: { eventId: first?.eventId } });
      await until('the replay', () => receivedAt(p).length >= 2);
      const [again] = receivedAt(p).slice(1);
      expect(again?.headers['webhook-id']).toBe(first?.eventId);
      expect(verified(endpoint.secret, again as Received).type).toBe('invite.created');
      await until('the replay logged', async () => (await deliveries(owner, team.slug, endpoint.id)).body.data.length === 2);
      const [latest] = (await deliveries(owner, team.slug, endpoint.id)).body.data;
      expect(latest).toMatchObject({ eventId: first?.eventId, attempt: 1, replay: true, succeeded: true, responseStatus: 200 });
    },
  );

  it('sends nothing more to an endpoint deleted while its message waits for a retry', { timeout: 60_000 }, async () => {
    // The first attempt fails, but only once the endpoint is deleted: its retry finds nothing to send to.
    let deleted: () => void = () => undefined;
    const gone = new Promise<number>((resolve) => (deleted = () => resolve(500)));
    const p = path((n) => (n === 0 ? gone : 204));
    const { owner, team, endpoint } = await setUp(p, ['invite.created']);
    await invite(owner, team.slug);
    await until('the first attempt', () => receivedAt(p).length >= 1);
    expect((await api.call('DELETE', `/api/teams/${team.slug}/webhooks/${endpoint.id}`, { token: owner.token })).status).toBe(200);
    deleted();
    await until('the attempt logged', async () => {
      const db = await (api.table as NonNullable<typeof api.table>)();
      const logged = await db.entities.webhookDelivery.query.byEndpoint({ teamId: team.id, endpointId: endpoint.id }).go();
      return logged.data.length === 1;
    });
    await until('the queue drained', () => queue.size() === 0);
    expect(receivedAt(p)).toHaveLength(1);
    expect(deadOrders().some((d) => d.endpointId === endpoint.id)).toBe(false);
  });

  it('sends a deleted team its team.deleted event with the slug null (the old one in changes)', { timeout: 60_000 }, async () => {
    const p = path(() => 204);
    const { owner, team, endpoint } = await setUp(p, ['team.deleted']);
    expect((await api.call('DELETE', `/api/teams/${team.slug}`, { token: owner.token })).status).toBe(200);
    await until('the team.deleted event', () => receivedAt(p).length >= 1);
    const message = verified(endpoint.secret, receivedAt(p)[0] as Received) as ReturnType<typeof verified> & {
      data: { changes: { slug: { before: string } } };
    };
    expect(message.type).toBe('team.deleted');
    expect(message.data.team).toEqual({ id: team.id, slug: null });
    expect(message.data.changes.slug.before).toBe(team.slug);
  });

  it('allows a team 3 replays an hour here (WEBHOOK_REPLAYS_PER_TEAM_HOUR), then 429 with Retry-After; a refused replay spends nothing', async () => {
    const p = path(() => 204);
    const { owner, team, endpoint } = await setUp(p, ['invite.created']);
    await invite(owner, team.slug);
    await until('logged', async () => (await deliveries(owner, team.slug, endpoint.id)).body.data.length >= 1);
    const [one] = (await deliveries(owner, team.slug, endpoint.id)).body.data as { id: string }[];
    const replay = (deliveryId: string) =>
      api.call('POST', `/api/teams/${team.slug}/webhooks/${endpoint.id}/deliveries/${deliveryId}/replay`, { token: owner.token });
    expect((await replay('019ac1f2-6b3d-7e4f-8a9b-0c1d2e3f4a5b')).status).toBe(404);
    for (let n = 0; n < 3; n++) expect((await replay(one?.id as string)).status).toBe(200);
    const refused = await replay(one?.id as string);
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe('rate_limited');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // Another team's allowance is its own.
    const other = await setUp(
      path(() => 204),
      ['invite.created'],
    );
    await invite(other.owner, other.team.slug);
    await until('logged', async () => (await deliveries(other.owner, other.team.slug, other.endpoint.id)).body.data.length >= 1);
    const [theirs] = (await deliveries(other.owner, other.team.slug, other.endpoint.id)).body.data as { id: string }[];
    const replayed = await api.call('POST', `/api/teams/${other.team.slug}/webhooks/${other.endpoint.id}/deliveries/${theirs?.id}/replay`, {
      token: other.owner.token,
    });
    expect(replayed.status).toBe(200);
  });

  it('hands the fan-out batch back when the webhook queue cannot take its messages, and queues them once it can', async () => {
    const p = path(() => 204);
    const { owner, team, endpoint } = await setUp(p, ['team.updated']);
    const { handler } = await import('#functions/webhook-fanout.ts');
    const entryId = '019ac1f2-6b3d-7e4f-8a9b-0c1d2e3f4a5b';
    const record: DynamoDBRecord = {
      eventName: 'INSERT',
      dynamodb: {
        SequenceNumber: '1',
        NewImage: {
          __edb_e__: { S: 'auditEntry' },
          teamId: { N: String(team.id) },
          entryId: { S: entryId },
          action: { S: 'team.updated' },
          createdAt: { S: new Date().toISOString() },
        },
      },
    };
    await queue.stop();
    const refused = queuedEvent([record]);
    expect(await handler(refused)).toEqual({ batchItemFailures: [{ itemIdentifier: refused.Records[0]?.messageId }] });
    queue = (await import('#infra/local-queue.ts')).startLocalQueue('webhook', WEBHOOK_QUEUE);
    expect(await handler(queuedEvent([record], 2))).toEqual({ batchItemFailures: [] });
    // Queued: its delivery finds no such entry in the audit log, and drops it unsent.
    await until('the queue drained', () => queue.size() === 0);
    expect(receivedAt(p)).toHaveLength(0);
    expect((await deliveries(owner, team.slug, endpoint.id)).body.data).toEqual([]);
  });

  it('drops a queue message that is not a delivery order, or names nothing, without an attempt', async () => {
    const { handler } = await import('#functions/webhook-delivery.ts');
    const message = (body: string, id: string) =>
      ({
        messageId: id,
        receiptHandle: `r-${id}`,
        body,
        attributes: { ApproximateReceiveCount: '1', SentTimestamp: '0', SenderId: 'test', ApproximateFirstReceiveTimestamp: '0' },
        messageAttributes: {},
        md5OfBody: '',
        eventSource: 'aws:sqs',
        eventSourceARN: 'arn:aws:sqs:local:000000000000:webhooks',
        awsRegion: 'local',
      }) as SQSRecord;
    const answer = await handler({
      Records: [
        message('not json', 'a'),
        message(JSON.stringify({ teamId: 1, endpointId: 2 }), 'b'),
        message(JSON.stringify({ teamId: 1, endpointId: 2, entryId: '019ac1f2-6b3d-7e4f-8a9b-0c1d2e3f4a5b' }), 'c'),
      ],
    });
    expect(answer).toEqual({ batchItemFailures: [] });
  });

  it("is for OWNERs and ADMINs of the endpoint's own team; anything else is 403 or 404", async () => {
    const p = path(() => 204);
    const { owner, team, endpoint } = await setUp(p, ['invite.created']);
    const [admin, member] = [await signUp(api, 'admin'), await signUp(api, 'member')];
    await addMember(api, team.slug, owner, admin, 'ADMIN');
    await addMember(api, team.slug, owner, member, 'MEMBER');
    await until('the invites delivered', () => receivedAt(p).length >= 2);
    await until('logged', async () => (await deliveries(owner, team.slug, endpoint.id)).body.data.length >= 2);
    const [one] = (await deliveries(admin, team.slug, endpoint.id)).body.data as { id: string }[];
    const replay = (user: TestUser, slug: string, endpointId: number | string, deliveryId: string) =>
      api.call('POST', `/api/teams/${slug}/webhooks/${endpointId}/deliveries/${deliveryId}/replay`, { token: user.token });

    expect((await deliveries(member, team.slug, endpoint.id)).status).toBe(403);
    expect((await replay(member, team.slug, endpoint.id, one?.id as string)).status).toBe(403);
    expect((await replay(admin, team.slug, endpoint.id, one?.id as string)).status).toBe(200);

    // Another team's owner, with their own endpoint: neither this team's endpoint nor its deliveries.
    const other = await setUp(
      path(() => 204),
      ['invite.created'],
    );
    for (const res of [
      await deliveries(other.owner, team.slug, endpoint.id),
      await deliveries(other.owner, other.team.slug, endpoint.id),
      await replay(other.owner, other.team.slug, endpoint.id, one?.id as string),
      await replay(other.owner, other.team.slug, other.endpoint.id, one?.id as string),
      await replay(owner, team.slug, endpoint.id, '019ac1f2-6b3d-7e4f-8a9b-0c1d2e3f4a5b'),
      await replay(owner, team.slug, endpoint.id, 'not-a-uuid'),
      await replay(owner, team.slug, 'x', one?.id as string),
    ]) {
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('not_found');
    }
    // An endpoint with no delivery yet has an empty log, not a 404.
    expect((await deliveries(other.owner, other.team.slug, other.endpoint.id)).body).toEqual({ data: [] });
  });
});
