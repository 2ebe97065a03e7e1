/**
 * The request line through the local server (issue 11 items 3 and 4): every API request writes
 * exactly one JSON line, which is also an EMF document, with its ids, route, status, error code,
 * caller and team, DynamoDB requests and units, and the domain events of the request. The server
 * runs in this process, so its stdout and stderr are captured here, as CloudWatch Logs would
 * receive them from the function.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  EVENT_METRICS,
  FUNCTION_FIELD,
  METRIC_NAMESPACE,
  REQUEST_METRICS,
  ROUTE_GROUP_DIMENSION,
  routeGroup,
} from '#lib/core/metric-names.ts';
import { type Reply, type TestUser, createTeam, freshEmail, signUp, useApi } from '../helpers/api.ts';

// Read by lib/core/config.ts when the handlers first load, after this: a rotated refresh token is
// reuse after a second; one rotation per session, then 429; one failed sign-in, then the account waits.
vi.hoisted(() => {
  // Every line is written, whatever level a test run may set to keep quiet.
  process.env.AWS_LAMBDA_LOG_LEVEL = 'INFO';
  process.env.REFRESH_GRACE_SECONDS = '1';
  process.env.RATE_LIMIT_REFRESH_BURST = '1';
  process.env.RATE_LIMIT_REFRESH_REFILL = '1';
  process.env.RATE_LIMIT_REFRESH_REFILL_SECONDS = '3600';
  process.env.RATE_LIMIT_ACCOUNT_FAILURES = '1';
  process.env.RATE_LIMIT_ACCOUNT_BACKOFF_SECONDS = '600';
});

type Line = Record<string, unknown> & { _aws?: { Timestamp: number; CloudWatchMetrics: Directive[] } };
interface Directive {
  Namespace: string;
  Dimensions: string[][];
  Metrics: { Name: string; Unit: string }[];
}

const api = useApi();
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Everything the process wrote to stdout and stderr while this file ran, and since the last `during`. */
const everything: string[] = [];
let recent: string[] = [];
beforeAll(() => {
  for (const stream of [process.stdout, process.stderr]) {
    const original = stream.write.bind(stream);
    vi.spyOn(stream, 'write').mockImplementation((chunk: string | Uint8Array) => {
      const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
      everything.push(text);
      recent.push(text);
      if (process.env.DEBUG_LINES) original(text);
      return true;
    });
  }
});
afterAll(() => vi.restoreAllMocks());

/** Each line must be one JSON object. */
const parse = (chunks: string[]): Line[] =>
  chunks
    .join('')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      const parsed: unknown = JSON.parse(line);
      expect(parsed, line).toBeTypeOf('object');
      return parsed as Line;
    });

/** The lines written while `work` ran (the request line is written before the answer is sent). */
const during = async (work: () => Promise<Reply>): Promise<{ reply: Reply; lines: Line[] }> => {
  recent = [];
  const reply = await work();
  return { reply, lines: parse(recent) };
};

/** A valid EMF document: every metric a number at the root, every dimension a string there. */
const expectEmf = (line: Line): void => {
  const aws = line._aws;
  expect(aws, JSON.stringify(line)).toBeDefined();
  expect(aws?.Timestamp).toBeTypeOf('number');
  expect(aws?.CloudWatchMetrics.length).toBeGreaterThan(0);
  for (const directive of aws?.CloudWatchMetrics ?? []) {
    expect(directive.Namespace).toBe(METRIC_NAMESPACE);
    for (const key of directive.Dimensions.flat()) expect(line[key], key).toBeTypeOf('string');
    for (const { Name, Unit } of directive.Metrics) {
      const value = line[Name];
      expect(typeof value === 'number' || (Array.isArray(value) && value.every((v) => typeof v === 'number')), Name).toBe(true);
      expect(['Count', 'Milliseconds']).toContain(Unit);
    }
  }
};

/** The one request line of a request, checked against its answer. */
const requestLine = (lines: Line[], reply: Reply, route: { name: string; method: string; path: string }): Line => {
  const found = lines.filter((line) => line.message === 'request');
  expect(found, JSON.stringify(lines)).toHaveLength(1);
  const line = found[0] as Line;
  expectEmf(line);
  expect(line).toMatchObject({
    level: 'INFO',
    requestId: reply.headers.get('x-request-id'),
    [FUNCTION_FIELD]: route.name,
    [ROUTE_GROUP_DIMENSION]: routeGroup(route.name),
    method: route.method,
    path: route.path,
    status: reply.status,
    [REQUEST_METRICS.requests]: 1,
    [REQUEST_METRICS.serverErrors]: reply.status >= 500 ? 1 : 0,
    [REQUEST_METRICS.rateLimited]: reply.status === 429 ? 1 : 0,
  });
  expect(Number.isNaN(Date.parse(line.timestamp as string))).toBe(false);
  expect(line.awsRequestId).toMatch(UUID);
  expect(line.awsRequestId).not.toBe(line.requestId);
  expect(line.coldStart).toBeTypeOf('boolean');
  expect(line[REQUEST_METRICS.duration]).toBeGreaterThan(0);
  expect(line.errorCode).toBe(reply.status >= 400 ? reply.body.error.code : undefined);
  // 5xx per route group; the 429 share and the events (if any) without dimensions; the rest are fields.
  const [scoped, ...rest] = line._aws?.CloudWatchMetrics ?? [];
  expect(scoped?.Dimensions).toEqual([[ROUTE_GROUP_DIMENSION]]);
  expect(scoped?.Metrics.map((m) => m.Name)).toEqual([REQUEST_METRICS.serverErrors]);
  expect(rest).toHaveLength(1);
  expect(rest[0]?.Dimensions).toEqual([[]]);
  expect(rest[0]?.Metrics.map((m) => m.Name)).toContain(REQUEST_METRICS.rateLimited);
  return line;
};

/** The domain events a request line carries, by name. */
const eventsOf = (line: Line): Record<string, unknown> => {
  const requestMetrics: readonly string[] = Object.values(REQUEST_METRICS);
  const names = (line._aws?.CloudWatchMetrics.slice(1) ?? [])
    .flatMap((d) => d.Metrics.map((m) => m.Name))
    .filter((name) => !requestMetrics.includes(name));
  return Object.fromEntries(names.map((name) => [name, line[name]]));
};

const users: TestUser[] = [];
const user = async (name = 'user') => {
  const u = await signUp(api, name);
  users.push(u);
  return u;
};

describe('one request line per API request', () => {
  let owner: TestUser;
  let slug: string;

  beforeAll(async () => {
    owner = await user('owner');
    slug = (await createTeam(api, owner)).slug;
  });

  it('signing up: 201, the new user, DynamoDB writes, and SignUps', async () => {
    const email = freshEmail('signup');
    const password = 'tangerine violin pavement';
    const { reply, lines } = await during(() =>
      api.call('POST', '/api/auth/signup', { json: { email, password, firstName: 'Sig', lastName: 'Nup' } }),
    );
    expect(reply.status).toBe(201);
    users.push({
      email,
      password,
      token: reply.body.data.session.access_token,
      refreshToken: reply.body.data.session.refresh_token,
      uuid: reply.body.data.session.user.id,
    });
    const line = requestLine(lines, reply, { name: 'auth-signup', method: 'POST', path: '/api/auth/signup' });
    expect(line.userId).toBe(reply.body.data.session.user.id);
    expect(line[REQUEST_METRICS.dynamodbRequests]).toBeGreaterThan(0);
    expect(line[REQUEST_METRICS.dynamodbWriteUnits]).toBeGreaterThan(0);
    expect(eventsOf(line)).toEqual({ [EVENT_METRICS.signUps]: 1 });
  });

  it('reading a team: the caller, the team, its DynamoDB requests and read units', async () => {
    const { reply, lines } = await during(() => api.call('GET', `/api/teams/${slug}`, { token: owner.token }));
    expect(reply.status).toBe(200);
    const line = requestLine(lines, reply, { name: 'teams-get', method: 'GET', path: '/api/teams/{slug}' });
    expect(line).toMatchObject({ userId: owner.uuid, team: slug });
    expect(line[REQUEST_METRICS.dynamodbRequests]).toBeGreaterThan(0);
    expect(line[REQUEST_METRICS.dynamodbReadUnits]).toBeGreaterThan(0);
    expect(line[REQUEST_METRICS.dynamodbWriteUnits]).toBe(0);
    expect(eventsOf(line)).toEqual({});
  });

  it('creating a team names it from the body', async () => {
    const created = `logged-${Date.now().toString(36)}`;
    const { reply, lines } = await during(() =>
      api.call('POST', '/api/teams', { token: owner.token, json: { name: 'Logged', slug: created } }),
    );
    expect(reply.status).toBe(201);
    expect(requestLine(lines, reply, { name: 'teams-create', method: 'POST', path: '/api/teams' })).toMatchObject({
      team: created,
      userId: owner.uuid,
    });
  });

  it('failures carry their error code: 401 without a token, 404 for a team of others', async () => {
    const anonymous = await during(() => api.call('GET', `/api/teams/${slug}`));
    expect(anonymous.reply.status).toBe(401);
    const line = requestLine(anonymous.lines, anonymous.reply, { name: 'teams-get', method: 'GET', path: '/api/teams/{slug}' });
    expect(line.errorCode).toBe('unauthorized');
    expect(line.userId).toBeUndefined();

    const stranger = await user('stranger');
    const other = await during(() => api.call('GET', `/api/teams/${slug}/members`, { token: stranger.token }));
    expect(other.reply.status).toBeGreaterThanOrEqual(403);
    expect(requestLine(other.lines, other.reply, { name: 'members-list', method: 'GET', path: '/api/teams/{slug}/members' })).toMatchObject(
      {
        userId: stranger.uuid,
        errorCode: other.reply.body.error.code,
      },
    );
  });

  it('invalid input: 422 validation_failed, and the password nowhere', async () => {
    const { reply, lines } = await during(() => api.call('POST', '/api/auth/signup', { json: { email: 'not-an-address', password: 'x' } }));
    expect(reply.status).toBe(422);
    expect(requestLine(lines, reply, { name: 'auth-signup', method: 'POST', path: '/api/auth/signup' }).errorCode).toBe(
      'validation_failed',
    );
  });

  it('sign-ins count by outcome: succeeded, failed, then limited (429, RateLimited)', async () => {
    const u = await user('signin');
    const ok = await during(() => api.call('POST', '/api/auth/signin', { json: { email: u.email, password: u.password } }));
    expect(ok.reply.status).toBe(200);
    users.push({ ...u, token: ok.reply.body.data.session.access_token, refreshToken: ok.reply.body.data.session.refresh_token });
    const okLine = requestLine(ok.lines, ok.reply, { name: 'auth-signin', method: 'POST', path: '/api/auth/signin' });
    expect(okLine.userId).toBe(u.uuid);
    expect(eventsOf(okLine)).toEqual({ [EVENT_METRICS.signInSucceeded]: 1 });

    const wrong = await during(() => api.call('POST', '/api/auth/signin', { json: { email: u.email, password: 'wrong password here' } }));
    expect(wrong.reply.status).toBe(401);
    const wrongLine = requestLine(wrong.lines, wrong.reply, { name: 'auth-signin', method: 'POST', path: '/api/auth/signin' });
    expect(wrongLine).toMatchObject({ errorCode: 'invalid_credentials' });
    expect(wrongLine.userId).toBeUndefined();
    expect(eventsOf(wrongLine)).toEqual({ [EVENT_METRICS.signInFailed]: 1 });

    const limited = await during(() => api.call('POST', '/api/auth/signin', { json: { email: u.email, password: u.password } }));
    expect(limited.reply.status).toBe(429);
    const limitedLine = requestLine(limited.lines, limited.reply, { name: 'auth-signin', method: 'POST', path: '/api/auth/signin' });
    expect(limitedLine.errorCode).toBe('rate_limited');
    expect(eventsOf(limitedLine)).toEqual({ [EVENT_METRICS.signInLimited]: 1 });
  });

  it('refresh: the user, a limited rotation (429), and reuse of a rotated token', async () => {
    const u = await user('refresh');
    const first = await during(() => api.call('POST', '/api/auth/refresh', { json: { refresh_token: u.refreshToken } }));
    expect(first.reply.status).toBe(200);
    const next = first.reply.body.data.session.refresh_token as string;
    users.push({ ...u, refreshToken: next, token: first.reply.body.data.session.access_token });
    expect(requestLine(first.lines, first.reply, { name: 'auth-refresh', method: 'POST', path: '/api/auth/refresh' }).userId).toBe(u.uuid);

    const limited = await during(() => api.call('POST', '/api/auth/refresh', { json: { refresh_token: next } }));
    expect(limited.reply.status).toBe(429);
    expect(
      requestLine(limited.lines, limited.reply, { name: 'auth-refresh', method: 'POST', path: '/api/auth/refresh' })[
        REQUEST_METRICS.rateLimited
      ],
    ).toBe(1);

    await new Promise((resolve) => setTimeout(resolve, 1100));
    const reused = await during(() => api.call('POST', '/api/auth/refresh', { json: { refresh_token: u.refreshToken } }));
    expect(reused.reply.status).toBe(401);
    const line = requestLine(reused.lines, reused.reply, { name: 'auth-refresh', method: 'POST', path: '/api/auth/refresh' });
    expect(eventsOf(line)).toEqual({ [EVENT_METRICS.refreshReuseDetected]: 1 });
  });

  it('invites: created, accepted and declined, each on its request line', async () => {
    const invitee = await user('invitee');
    const decliner = await user('decliner');
    for (const [who, outcome] of [
      [invitee, 'accept'],
      [decliner, 'decline'],
    ] as const) {
      const created = await during(() =>
        api.call('POST', `/api/teams/${slug}/invites`, { token: owner.token, json: { email: who.email, role: 'MEMBER' } }),
      );
      expect(created.reply.status).toBe(201);
      const line = requestLine(created.lines, created.reply, { name: 'invites-create', method: 'POST', path: '/api/teams/{slug}/invites' });
      expect(line.team).toBe(slug);
      expect(eventsOf(line)).toEqual({ [EVENT_METRICS.invitesCreated]: 1 });

      const mine = await api.call('GET', '/api/invites', { token: who.token });
      const uuid = mine.body.data.find((i: { team: { slug: string } }) => i.team.slug === slug).uuid as string;
      const ended = await during(() => api.call('POST', `/api/invites/${uuid}/${outcome}`, { token: who.token }));
      expect(ended.reply.status).toBe(200);
      const endedLine = requestLine(ended.lines, ended.reply, {
        name: `invites-${outcome}`,
        method: 'POST',
        path: `/api/invites/{uuid}/${outcome}`,
      });
      expect(endedLine.userId).toBe(who.uuid);
      expect(eventsOf(endedLine)).toEqual({ [outcome === 'accept' ? EVENT_METRICS.invitesAccepted : EVENT_METRICS.invitesDeclined]: 1 });
    }
  });

  it('a cold start is the first request of a function in the process', async () => {
    const first = await during(() => api.call('GET', '/api/auth/sessions', { token: owner.token }));
    const second = await during(() => api.call('GET', '/api/auth/sessions', { token: owner.token }));
    expect(requestLine(first.lines, first.reply, { name: 'auth-sessions-list', method: 'GET', path: '/api/auth/sessions' }).coldStart).toBe(
      true,
    );
    expect(
      requestLine(second.lines, second.reply, { name: 'auth-sessions-list', method: 'GET', path: '/api/auth/sessions' }).coldStart,
    ).toBe(false);
  });

  it('concurrent requests each count their own DynamoDB requests', async () => {
    // Warm: signing keys are cached per process; reading them is not part of a warm request.
    await api.call('GET', '/api/auth/user', { token: owner.token });
    recent = [];
    const replies = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        i % 2 === 0
          ? api.call('GET', '/api/auth/user', { token: owner.token })
          : api.call('GET', `/api/teams/${slug}`, { token: owner.token }),
      ),
    );
    const lines = parse(recent).filter((line) => line.message === 'request');
    expect(lines).toHaveLength(12);
    expect(new Set(lines.map((line) => line.requestId))).toEqual(new Set(replies.map((r) => r.headers.get('x-request-id'))));
    // docs/data-model.md (test/api/requests.test.ts): one BatchGetItem for the user, two for a team.
    for (const line of lines) {
      expect(line[REQUEST_METRICS.dynamodbRequests], String(line[FUNCTION_FIELD])).toBe(line[FUNCTION_FIELD] === 'auth-user' ? 1 : 2);
    }
  });

  it('no line holds a password, a token or an e-mail address, and every line is JSON with a level and a timestamp', () => {
    const lines = parse(everything);
    expect(lines.length).toBeGreaterThan(20);
    const text = everything.join('');
    expect(users.length).toBeGreaterThan(5);
    for (const u of users) {
      for (const secret of [u.email, u.password, u.token, u.refreshToken]) expect(text.includes(secret), secret.slice(0, 12)).toBe(false);
    }
    expect(text).not.toMatch(/@example\.com|authorization|"Token /i);
    for (const line of lines) {
      expect(['INFO', 'ERROR']).toContain(line.level);
      expect(Number.isNaN(Date.parse(line.timestamp as string))).toBe(false);
      if (line._aws) expectEmf(line);
    }
  });
});
