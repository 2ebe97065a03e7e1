import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { forgetCachedKeys } from '#lib/auth/keys/cache.ts';
import { db } from '#lib/db/service.ts';
import { type TestUser, addMember, createTeam, freshEmail, signUp, useApi } from '../helpers/api.ts';

/**
 * DynamoDB requests per endpoint, counted by an SDK middleware on the client the handlers use
 * (the local server runs them in this process). The session check rides in each request's first
 * read, so no authenticated endpoint pays a request for it. These counts are the contract of
 * docs/data-model.md; a change that adds a request shows up here.
 */
const api = useApi();
let counted: string[] = [];

beforeAll(() => {
  db().documents.middlewareStack.add(
    (next, context) => (args) => {
      counted.push(context.commandName as string);
      return next(args);
    },
    { step: 'initialize', name: 'countRequests' },
  );
});
afterAll(() => db().documents.middlewareStack.remove('countRequests'));

const requestsOf = async (call: () => Promise<{ status: number }>, status = 200) => {
  counted = [];
  const res = await call();
  expect(res.status).toBe(status);
  // Signing keys are cached per process; reading them is not part of a warm request.
  return counted.map((name) => name.replace(/Command$/, ''));
};

describe('DynamoDB requests per endpoint (warm)', () => {
  let owner: TestUser;
  let member: TestUser;
  let slug: string;
  let memberId: number;
  let inviteId: number;

  beforeAll(async () => {
    owner = await signUp(api);
    member = await signUp(api);
    slug = (await createTeam(api, owner)).slug;
    memberId = await addMember(api, slug, owner, member, 'MEMBER');
    await api.call('POST', `/api/teams/${slug}/invites`, { token: owner.token, json: { email: freshEmail(), role: 'MEMBER' } });
    inviteId = (await api.call('GET', `/api/teams/${slug}/invites`, { token: owner.token })).body.data[0].id;
    // Warm every handler module and key cache once.
    await api.call('GET', '/api/auth/user', { token: owner.token });
  });

  it.each([
    ['GET /api/auth/user', () => api.call('GET', '/api/auth/user', { token: owner.token }), ['BatchGetItem']],
    ['GET /api/teams', () => api.call('GET', '/api/teams', { token: owner.token }), ['Query', 'BatchGetItem']],
    ['GET /api/teams/{slug}', () => api.call('GET', `/api/teams/${slug}`, { token: owner.token }), ['BatchGetItem', 'BatchGetItem']],
    [
      'GET /api/teams/{slug}/members',
      () => api.call('GET', `/api/teams/${slug}/members`, { token: owner.token }),
      ['BatchGetItem', 'Query', 'BatchGetItem'],
    ],
    [
      'GET /api/teams/{slug}/invites',
      () => api.call('GET', `/api/teams/${slug}/invites`, { token: owner.token }),
      ['BatchGetItem', 'Query', 'BatchGetItem'],
    ],
    [
      'GET /api/teams/{slug}/invites/{id}',
      () => api.call('GET', `/api/teams/${slug}/invites/${inviteId}`, { token: owner.token }),
      ['BatchGetItem', 'Query', 'BatchGetItem'],
    ],
    // The session and the user (its address, confirmed?) first; that member has no pending invites, so no third read.
    ['GET /api/invites', () => api.call('GET', '/api/invites', { token: member.token }), ['BatchGetItem', 'Query']],
    ['GET /api/auth/sessions', () => api.call('GET', '/api/auth/sessions', { token: owner.token }), ['BatchGetItem', 'Query']],
    [
      'PUT /api/teams/{slug} (name)',
      () => api.call('PUT', `/api/teams/${slug}`, { token: owner.token, json: { name: 'Renamed', slug } }),
      ['BatchGetItem', 'BatchGetItem', 'TransactWriteItems'],
    ],
    [
      'PUT …/members/{memberId}',
      () => api.call('PUT', `/api/teams/${slug}/members/${memberId}`, { token: owner.token, json: { role: 'ADMIN' } }),
      ['BatchGetItem', 'BatchGetItem', 'Query', 'TransactWriteItems'],
    ],
  ] as const)('%s', async (_, call, expected) => {
    expect(await requestsOf(call)).toEqual(expected);
  });

  it('a paged list: the cursor key is read once per container (GetItem), then no request of its own', async () => {
    const page = () => api.call('GET', `/api/teams/${slug}/members?limit=1`, { token: owner.token });
    // This file's first cursor: the key item is read (and, on a fresh table, made: PutItem).
    const first = await requestsOf(page);
    expect(first.filter((r) => r !== 'GetItem' && r !== 'PutItem')).toEqual(['BatchGetItem', 'Query', 'BatchGetItem']);
    expect(first.filter((r) => r === 'GetItem')).toEqual(['GetItem']);
    const cursor = new URL(/<([^>]+)>/.exec((await page()).headers.get('link') as string)?.[1] as string).searchParams.get(
      'cursor',
    ) as string;
    expect(await requestsOf(page)).toEqual(['BatchGetItem', 'Query', 'BatchGetItem']);
    expect(await requestsOf(() => api.call('GET', `/api/teams/${slug}/members?limit=1&cursor=${cursor}`, { token: owner.token }))).toEqual([
      'BatchGetItem',
      'Query',
      'BatchGetItem',
    ]);
  });

  it('POST /api/teams: the user and the session in one read, then one transaction', async () => {
    expect(
      await requestsOf(() => api.call('POST', '/api/teams', { token: owner.token, json: { name: 'N', slug: `${slug}-x` } }), 201),
    ).toEqual(['BatchGetItem', 'TransactWriteItems']);
  });

  it('accept: the invite, the user and the session in one read, then its team (named by the invite), then one transaction', async () => {
    const guest = await signUp(api);
    await api.call('POST', `/api/teams/${slug}/invites`, { token: owner.token, json: { email: guest.email, role: 'MEMBER' } });
    const uuid = (await api.call('GET', '/api/invites', { token: guest.token })).body.data[0].uuid;
    expect(await requestsOf(() => api.call('POST', `/api/invites/${uuid}/accept`, { token: guest.token }))).toEqual([
      'BatchGetItem',
      'GetItem',
      'TransactWriteItems',
    ]);
  });

  it('refresh: the token, then its session and user, then one transaction (the session item carries its rotation limit)', async () => {
    const user = await signUp(api);
    expect(await requestsOf(() => api.call('POST', '/api/auth/refresh', { json: { refresh_token: user.refreshToken } }))).toEqual([
      'GetItem',
      'BatchGetItem',
      'TransactWriteItems',
    ]);
  });

  it('sign-in: three limiter updates, the e-mail and the user, two resets and the token back, the sessions, then one transaction', async () => {
    const user = await signUp(api);
    const requests = await requestsOf(() => api.call('POST', '/api/auth/signin', { json: { email: user.email, password: user.password } }));
    // The address bucket first, alone; then the account+network back-off and the account hourly
    // set beside the e-mail claim; the user; then the network's reset, the hourly entry's removal,
    // the address's token given back and the user's sessions (for the cap) beside the transaction.
    // Requests sent side by side arrive in any order.
    expect(requests[0]).toBe('UpdateItem');
    expect(requests.slice(1, 4).sort()).toEqual(['GetItem', 'UpdateItem', 'UpdateItem']);
    expect(requests[4]).toBe('GetItem');
    expect(requests.slice(5).sort()).toEqual(['Query', 'TransactWriteItems', 'UpdateItem', 'UpdateItem', 'UpdateItem']);
  });

  it("sign-up: the source network's bucket, then one transaction (the address's mail allowance is the mailer's)", async () => {
    const json = { email: freshEmail(), password: 'a sound passphrase', firstName: 'S', lastName: 'U' };
    expect(await requestsOf(() => api.call('POST', '/api/auth/signup', { json }), 201)).toEqual(['UpdateItem', 'TransactWriteItems']);
  });

  it('sign-out: one conditional delete is both the session check and the sign-out', async () => {
    const user = await signUp(api);
    expect(await requestsOf(() => api.call('POST', '/api/auth/signout', { token: user.token }))).toEqual(['DeleteItem']);
  });
});

describe('DynamoDB requests on a cold start (the signing keys not yet in memory)', () => {
  let owner: TestUser;
  let slug: string;

  beforeAll(async () => {
    owner = await signUp(api);
    slug = (await createTeam(api, owner)).slug;
  });

  /** As a new function instance: its public keys not loaded yet (the handler modules stay imported). */
  const cold =
    <T>(call: () => Promise<T>) =>
    () => {
      forgetCachedKeys();
      return call();
    };

  it('GET /api/teams/{slug}: the public keys ride in the first BatchGetItem, no GetItem of their own', async () => {
    expect(await requestsOf(cold(() => api.call('GET', `/api/teams/${slug}`, { token: owner.token })))).toEqual([
      'BatchGetItem',
      'BatchGetItem',
    ]);
    // The keys read that way are kept: the next request verifies from memory.
    expect(await requestsOf(() => api.call('GET', `/api/teams/${slug}`, { token: owner.token }))).toEqual(['BatchGetItem', 'BatchGetItem']);
  });

  it('GET /api/auth/user and GET /api/teams: one BatchGetItem with the keys; the Query before it is keyed by the claimed user only', async () => {
    expect(await requestsOf(cold(() => api.call('GET', '/api/auth/user', { token: owner.token })))).toEqual(['BatchGetItem']);
    expect(await requestsOf(cold(() => api.call('GET', '/api/teams', { token: owner.token })))).toEqual(['Query', 'BatchGetItem']);
  });

  it('sign-out, which reads nothing before its conditional delete, still verifies first (one GetItem of the keys)', async () => {
    const user = await signUp(api);
    expect(await requestsOf(cold(() => api.call('POST', '/api/auth/signout', { token: user.token })))).toEqual(['GetItem', 'DeleteItem']);
  });
});
