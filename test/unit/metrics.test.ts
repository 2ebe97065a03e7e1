import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { commit } from '#lib/db/transactions.ts';
import { AppError } from '#lib/core/errors.ts';
import { lambdaContext, toApiGatewayEvent } from '#lib/http/apigw.ts';
import { errorResponse, jsonResponse } from '#lib/http/errors.ts';
import { type RequestRecord, withinRequest } from '#lib/core/log.ts';
import { EVENT_METRICS } from '#lib/core/metric-names.ts';
import { emfDocument, recordEvent } from '#lib/core/metrics.ts';
import { measured } from '#lib/http/measured.ts';

let out: string[] = [];
beforeEach(() => {
  vi.stubEnv('AWS_LAMBDA_LOG_LEVEL', 'INFO');
  out = [];
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => out.push(String(chunk)) > 0);
});
afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

const record = (): RequestRecord => ({
  requestId: 'api-1',
  awsRequestId: 'lambda-1',
  dynamodb: { requests: 0, readUnits: 0, writeUnits: 0 },
  events: new Map(),
});

const lines = () => out.map((chunk) => JSON.parse(chunk) as Record<string, unknown>);

const call = () => {
  const event = toApiGatewayEvent(
    { method: 'GET', url: '/api/teams/acme', headers: [], body: Buffer.alloc(0), sourceIp: '127.0.0.1', host: 'localhost' },
    'GET /api/teams/{slug}',
    { slug: 'acme' },
  );
  return [event, lambdaContext('roster-teams-get', 10_000, 'lambda-id')] as const;
};

describe('EMF documents', () => {
  it('put events without dimensions in one directive', () => {
    expect(emfDocument({}, { events: { SignUps: 1 }, now: 5, fields: { message: 'metric' } })).toEqual({
      message: 'metric',
      SignUps: 1,
      _aws: { Timestamp: 5, CloudWatchMetrics: [{ Namespace: 'Roster', Dimensions: [[]], Metrics: [{ Name: 'SignUps', Unit: 'Count' }] }] },
    });
  });

  it('publish 5xx per route group, the 429 share for the whole API beside the events; the rest stays fields', () => {
    const doc = emfDocument(
      { Requests: 1, ServerErrors: 0, RateLimited: 1, Duration: 3, DynamoDBRequests: 2 },
      { dimensions: { RouteGroup: 'teams' }, events: { OutboxLag: [1, 2], TransactionConflicts: 1 }, now: 5 },
    );
    expect(doc).toMatchObject({
      RouteGroup: 'teams',
      Requests: 1,
      Duration: 3,
      DynamoDBRequests: 2,
      OutboxLag: [1, 2],
      TransactionConflicts: 1,
    });
    expect((doc._aws as { CloudWatchMetrics: unknown }).CloudWatchMetrics).toEqual([
      { Namespace: 'Roster', Dimensions: [['RouteGroup']], Metrics: [{ Name: 'ServerErrors', Unit: 'Count' }] },
      {
        Namespace: 'Roster',
        Dimensions: [[]],
        Metrics: [
          { Name: 'RateLimited', Unit: 'Count' },
          { Name: 'OutboxLag', Unit: 'Milliseconds' },
        ],
      },
    ]);
  });

  it('publish nothing for a line of fields only, and refuse a published value without its dimension', () => {
    expect(emfDocument({ Requests: 1 }, { events: { TransactionConflicts: 1 } })).toEqual({ Requests: 1, TransactionConflicts: 1 });
    expect(() => emfDocument({ ServerErrors: 1 })).toThrow('metric ServerErrors needs the dimension RouteGroup');
  });
});

describe('recordEvent', () => {
  it('writes a line of its own outside a request', () => {
    recordEvent(EVENT_METRICS.outboxLag, 1234);
    expect(lines()).toEqual([
      {
        timestamp: expect.any(String),
        level: 'INFO',
        message: 'metric',
        OutboxLag: 1234,
        _aws: {
          Timestamp: expect.any(Number),
          CloudWatchMetrics: [{ Namespace: 'Roster', Dimensions: [[]], Metrics: [{ Name: 'OutboxLag', Unit: 'Milliseconds' }] }],
        },
      },
    ]);
  });

  it('adds to the request inside one, and writes nothing', () => {
    const r = record();
    withinRequest(r, () => {
      recordEvent(EVENT_METRICS.signUps);
      recordEvent(EVENT_METRICS.signUps);
    });
    expect(out).toEqual([]);
    expect(r.events.get(EVENT_METRICS.signUps)).toEqual([1, 1]);
  });

  it('counts a transaction conflict before commit() retries it', async () => {
    const r = record();
    const outcomes = [
      { canceled: true, reasons: [{ name: 'team', code: 'TransactionConflict' }] },
      { canceled: false, reasons: [] },
    ];
    await withinRequest(r, () => commit(async () => outcomes.shift() as (typeof outcomes)[number], { otherwise: () => 'retry' }));
    expect(r.events.get(EVENT_METRICS.transactionConflicts)).toEqual([1]);
  });
});

describe('measured', () => {
  it('writes one request line with the events of the request, counts summed and durations kept apart', async () => {
    const handler = measured('teams-get', '/api/teams/{slug}', async () => {
      recordEvent(EVENT_METRICS.invitesCreated);
      recordEvent(EVENT_METRICS.invitesCreated);
      recordEvent(EVENT_METRICS.outboxLag, 7);
      recordEvent(EVENT_METRICS.outboxLag, 9);
      return jsonResponse(200, { data: {} }, 'x');
    });
    const [event, context] = call();
    await handler(event, context);
    expect(lines()).toHaveLength(1);
    expect(lines()[0]).toMatchObject({
      message: 'request',
      requestId: event.requestContext.requestId,
      awsRequestId: 'lambda-id',
      method: 'GET',
      path: '/api/teams/{slug}',
      status: 200,
      Function: 'teams-get',
      RouteGroup: 'teams',
      Requests: 1,
      ServerErrors: 0,
      RateLimited: 0,
      InvitesCreated: 2,
      OutboxLag: [7, 9],
    });
  });

  it('counts a 5xx with its error code, and a first invocation as the cold one', async () => {
    const handler = measured('cold-once', '/x', async () => errorResponse(new AppError('unavailable'), 'x'));
    const [event, context] = call();
    await handler(event, context);
    await handler(event, context);
    expect(lines().map((l) => [l.status, l.errorCode, l.ServerErrors, l.coldStart])).toEqual([
      [503, 'unavailable', 1, true],
      [503, 'unavailable', 1, false],
    ]);
  });

  it('still writes the line, as a 500, when the handler throws', async () => {
    const handler = measured('throws', '/x', () => Promise.reject(new Error('escaped')));
    const [event, context] = call();
    await expect(handler(event, context)).rejects.toThrow('escaped');
    expect(lines()).toMatchObject([{ status: 500, ServerErrors: 1 }]);
  });

  it('keeps concurrent requests apart', async () => {
    const handler = measured('teams-get', '/x', async () => {
      recordEvent(EVENT_METRICS.signUps);
      await new Promise((resolve) => setTimeout(resolve, 5));
      return jsonResponse(200, {}, 'x');
    });
    const [event, context] = call();
    await Promise.all(Array.from({ length: 5 }, () => handler(event, context)));
    expect(lines().map((l) => l.SignUps)).toEqual([1, 1, 1, 1, 1]);
  });
});
