/**
 * Object-level isolation and mass assignment (SECURITY-TESTS B1-B5 and D1-D6) through HTTP.
 * Fixture: team A (oA OWNER, aA ADMIN, mA MEMBER, a pending invite to inv), team B (oB OWNER, a
 * pending invite to someone else and one to x), and x in no team. Every response this file
 * receives, fixtures included, is walked against a key allowlist (D5).
 */
import { randomUUID } from 'node:crypto';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { db } from '#lib/db/service.ts';
import { type Reply, type TestUser, addMember, confirm, createTeam, freshEmail, freshSlug, signUp, useApi } from '../helpers/api.ts';

const api = useApi();

// ---------------------------------------------------------------------------------------------
// D5: every response body of this file is walked; keys outside the wire views are violations.
// ---------------------------------------------------------------------------------------------

/** The keys of CONTRACT.md's envelope, session, user, team, member, membership and invite views. */
const ALLOWED_KEYS = new Set([
  'data',
  'error',
  'code',
  'message',
  'fields',
  'session',
  'access_token',
  'token_type',
  'expires_in',
  'expires_at',
  'refresh_token',
  'user',
  'id',
  'aud',
  'role',
  'email',
  'email_confirmed_at',
  'confirmed_at',
  'new_email',
  'last_sign_in_at',
  'app_metadata',
  'provider',
  'providers',
  'user_metadata',
  'created_at',
  'updated_at',
  'name',
  'slug',
  'logo',
  // A team's MFA policy (docs/mfa.md).
  'requireMfa',
  'createdAt',
  'updatedAt',
  'userId',
  'teamId',
  'firstName',
  'lastName',
  'uuid',
  'team',
  'status',
  'invitedBy',
  'expiresAt',
]);
/** `error.fields` is keyed by request field names. */
const FIELD_NAMES = new Set(['(body)', 'email', 'password', 'firstName', 'lastName', 'name', 'slug', 'role', 'limit', 'cursor']);
/** Storage internals (none is allowed anywhere): named so that a leak says what it is. */
const INTERNAL_KEYS =
  /^(pk|sk|gsi\d+(pk|sk)|__edb_.*|passwordHash|tokenHash|ttl|userUuid|invitedByUuid|inviteUuid|inviteId|memberId|ownerCount|memberCount|password)$/;

const violations: string[] = [];
const keysSeen = new Set<string>();
let responsesWalked = 0;

const walk = (value: unknown, at: string, keys: Set<string>, out: string[]): void => {
  if (typeof value === 'string' && value.startsWith('$argon2')) out.push(`${at}: a password hash`);
  if (value === null || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    value.forEach((item, i) => walk(item, `${at}[${i}]`, ALLOWED_KEYS, out));
    return;
  }
  for (const [key, child] of Object.entries(value)) {
    keysSeen.add(key);
    if (!keys.has(key)) out.push(`${at}.${key}: ${INTERNAL_KEYS.test(key) ? 'a storage internal' : 'not an allowed key'}`);
    walk(child, `${at}.${key}`, key === 'fields' ? FIELD_NAMES : ALLOWED_KEYS, out);
  }
};

const send = api.call;
api.call = async (method, path, options) => {
  const res = await send(method, path, options);
  responsesWalked++;
  const label = `${method} ${path} -> ${res.status}`;
  if (typeof res.body !== 'object' || res.body === null) violations.push(`${label}: body is not a JSON object`);
  else walk(res.body, label, ALLOWED_KEYS, violations);
  return res;
};

const allViolations: string[] = [];
afterEach(() => {
  // Charged to the test that received the response (the fixtures' ones to the first test).
  const found = violations.splice(0);
  allViolations.push(...found);
  expect(found).toEqual([]);
});

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

const expectError = (res: Reply, status: number, code: string): void => {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
  expect(Object.keys(res.body)).toEqual(['error']);
  expect(Object.keys(res.body.error).every((k) => ['code', 'message', 'fields'].includes(k))).toBe(true);
  expect(res.body.error.message).toEqual(expect.stringMatching(/\S/));
};

const expectOk = (res: Reply, status = 200): void => {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(Object.keys(res.body)).toEqual(['data']);
};

/** Sends `raw` exactly as written (duplicate keys, `__proto__`), declared as JSON. */
const sendRaw = (method: string, path: string, token: string, raw: string): Promise<Reply> =>
  api.call(method, path, { token, raw, headers: { 'content-type': 'application/json' } });

/** Signs up with exactly this e-mail; returns the reply and, on 201, the user. */
const signUpAs = async (email: string): Promise<{ res: Reply; user?: TestUser }> => {
  const password = 'correct horse battery staple';
  const res = await api.call('POST', '/api/auth/signup', { json: { email, password, firstName: 'Named', lastName: 'Tester' } });
  if (res.status !== 201) return { res };
  const session = res.body.data.session;
  const user = {
    email: session.user.email,
    password,
    token: session.access_token,
    refreshToken: session.refresh_token,
    uuid: session.user.id,
  };
  // Confirmed, as its owner would: an unconfirmed address may not see or answer invitations at all.
  await confirm(api, user);
  return { res, user };
};

interface MemberRow {
  id: number;
  userId: number;
  email: string;
  role: string;
  createdAt: string;
  updatedAt: string;
}

const membersOf = async (slug: string, viewer: TestUser): Promise<MemberRow[]> => {
  const res = await api.call('GET', `/api/teams/${slug}/members?limit=1000`, { token: viewer.token });
  expectOk(res);
  return res.body.data;
};

const memberNamed = async (slug: string, viewer: TestUser, who: TestUser): Promise<MemberRow | undefined> =>
  (await membersOf(slug, viewer)).find((m) => m.email === who.email);

interface InviteRow {
  id: number;
  uuid: string;
  teamId: number;
  team: { id: number; name: string; slug: string };
  email: string;
  role: string;
  status: string;
  invitedBy: { id: number; email: string } | null;
  expiresAt: string;
  createdAt: string;
}

const teamInvites = async (slug: string, viewer: TestUser): Promise<InviteRow[]> => {
  const res = await api.call('GET', `/api/teams/${slug}/invites?limit=1000`, { token: viewer.token });
  expectOk(res);
  return res.body.data;
};

/** Invites `email` as `by` and returns the invite as the team lists it. */
const invite = async (slug: string, by: TestUser, email: string, role = 'MEMBER'): Promise<InviteRow> => {
  const res = await api.call('POST', `/api/teams/${slug}/invites`, { token: by.token, json: { email, role } });
  expectOk(res, 201);
  const found = (await teamInvites(slug, by)).find((i) => i.email === email.trim().toLowerCase());
  if (!found) throw new Error(`invite to ${email} not listed`);
  return found;
};

const previewAs = (uuid: string, who: TestUser): Promise<Reply> => api.call('GET', `/api/invites/${uuid}`, { token: who.token });

/** `value`, or a clear failure when a lookup came back empty. */
const must = <T>(value: T | null | undefined, what: string): T => {
  if (value === null || value === undefined) throw new Error(`${what} not found`);
  return value;
};

/** `item` without `keys`: what must stay equal across an update. */
const omit = (item: object, ...keys: string[]): Record<string, unknown> =>
  Object.fromEntries(Object.entries(item).filter(([k]) => !keys.includes(k)));

/** The stored items, read strongly consistent: fields the API never shows (counters) are checked here. */
const storedTeam = async (teamId: number) => (await db().entities.team.get({ teamId }).go({ consistent: true })).data;
const storedMembership = async (teamId: number, userUuid: string) =>
  (await db().entities.membership.get({ teamId, userUuid }).go({ consistent: true })).data;

// ---------------------------------------------------------------------------------------------
// Fixture
// ---------------------------------------------------------------------------------------------

let oA: TestUser, aA: TestUser, mA: TestUser, inv: TestUser, x: TestUser, oB: TestUser;
let A: { slug: string; id: number; name: string };
let B: { slug: string; id: number };
let invA: InviteRow, invB: InviteRow, invX: InviteRow;
let oBMemberId: number;
let oBUserId: number;
let mAMemberId: number;

/** Builds a team owned by oA with aA as ADMIN and mA as MEMBER. */
const teamWithRoles = async (): Promise<{ slug: string; id: number }> => {
  const t = await createTeam(api, oA, freshSlug('iso'));
  await addMember(api, t.slug, oA, aA, 'ADMIN');
  await addMember(api, t.slug, oA, mA, 'MEMBER');
  return t;
};

beforeAll(async () => {
  oA = await signUp(api, 'oa');
  aA = await signUp(api, 'aa');
  mA = await signUp(api, 'ma');
  inv = await signUp(api, 'inv');
  x = await signUp(api, 'x');
  oB = await signUp(api, 'ob');
  const a = await teamWithRoles();
  A = { ...a, name: `Team ${a.slug}` };
  invA = await invite(A.slug, oA, inv.email);
  B = await createTeam(api, oB, freshSlug('iso-b'));
  invB = await invite(B.slug, oB, freshEmail('b-invitee'));
  invX = await invite(B.slug, oB, x.email);
  const oBRow = must(await memberNamed(B.slug, oB, oB), 'oB in B');
  oBMemberId = oBRow.id;
  oBUserId = oBRow.userId;
  mAMemberId = must(await memberNamed(A.slug, oA, mA), 'mA in A').id;
});

/** Strings that identify team A's data: none may appear in an answer to an outsider. */
const teamASecrets = (): string[] => [A.slug, A.name, String(A.id), oA.email, aA.email, mA.email, inv.email, invA.uuid, String(invA.id)];

const expectNoneOf = (res: Reply, secrets: string[]): void => {
  const text = JSON.stringify(res.body);
  for (const secret of secrets) expect(text).not.toContain(secret);
};

// ---------------------------------------------------------------------------------------------
// B: object-level authorization
// ---------------------------------------------------------------------------------------------

describe('B1 cross-team reads', () => {
  const READS: { what: string; path: (slug: string) => string }[] = [
    { what: 'team', path: (slug) => `/api/teams/${slug}` },
    { what: 'members', path: (slug) => `/api/teams/${slug}/members` },
    { what: 'invites', path: (slug) => `/api/teams/${slug}/invites` },
    { what: 'invite by id', path: (slug) => `/api/teams/${slug}/invites/${invA.id}` },
  ];
  const OUTSIDERS = [
    { actor: 'x', user: () => x },
    { actor: 'oB', user: () => oB },
  ];
  const rows = OUTSIDERS.flatMap((o) => READS.map((r) => ({ ...o, ...r })));

  it.each(rows.map((r) => [`${r.actor} reads team A's ${r.what} -> 404, nothing of A`, r] as const))('%s', async (_name, row) => {
    const res = await api.call('GET', row.path(A.slug), { token: row.user().token });
    expectError(res, 404, 'not_found');
    expectNoneOf(res, teamASecrets());
    // "Exists but not yours" reads exactly like "does not exist".
    const missing = await api.call('GET', row.path(freshSlug('never-created')), { token: row.user().token });
    expect(res.body).toEqual(missing.body);
  });
});

describe('B2 invite id confusion', () => {
  it.each([['GET'], ['DELETE']])('oA %s /api/teams/A/invites/{id of B invite} -> 404, B invite intact', async (method) => {
    const res = await api.call(method, `/api/teams/${A.slug}/invites/${invB.id}`, { token: oA.token });
    expectError(res, 404, 'not_found');
    expectNoneOf(res, [B.slug, invB.email, invB.uuid]);
    const still = await api.call('GET', `/api/teams/${B.slug}/invites/${invB.id}`, { token: oB.token });
    expectOk(still);
    expect(still.body.data).toMatchObject({ id: invB.id, uuid: invB.uuid, teamId: B.id, status: 'PENDING' });
  });

  it("aA (ADMIN of A) cannot delete B's invite through A either", async () => {
    expectError(await api.call('DELETE', `/api/teams/${A.slug}/invites/${invB.id}`, { token: aA.token }), 404, 'not_found');
    expect((await teamInvites(B.slug, oB)).map((i) => i.id)).toContain(invB.id);
  });
});

describe('B3 member id confusion', () => {
  it.each([
    ['PUT', { role: 'MEMBER' }],
    ['DELETE', undefined],
  ] as const)('oA %s /api/teams/A/members/{memberId of oB in B} -> 404, B unchanged', async (method, json) => {
    const before = await membersOf(B.slug, oB);
    const res = await api.call(method, `/api/teams/${A.slug}/members/${oBMemberId}`, { token: oA.token, ...(json ? { json } : {}) });
    expectError(res, 404, 'not_found');
    expectNoneOf(res, [B.slug, oB.email]);
    expect(await membersOf(B.slug, oB)).toEqual(before);
    expect(before).toEqual([expect.objectContaining({ id: oBMemberId, role: 'OWNER', email: oB.email })]);
  });
});

describe('B3b ids of another kind', () => {
  // Integer ids of teams, members and invites come from one generator: each path must only find its own kind.
  it.each([
    ['PUT a member by the id of an invite', 'PUT', () => `/api/teams/${A.slug}/members/${invA.id}`],
    ['DELETE a member by the id of the team', 'DELETE', () => `/api/teams/${A.slug}/members/${A.id}`],
    ['GET an invite by the id of a member', 'GET', () => `/api/teams/${A.slug}/invites/${mAMemberId}`],
    ['DELETE an invite by the id of the team', 'DELETE', () => `/api/teams/${A.slug}/invites/${A.id}`],
  ] as const)('oA may not %s: 404, A unchanged', async (_what, method, path) => {
    const before = [await membersOf(A.slug, oA), await teamInvites(A.slug, oA)];
    const res = await api.call(method, path(), { token: oA.token, ...(method === 'PUT' ? { json: { role: 'ADMIN' } } : {}) });
    expectError(res, 404, 'not_found');
    expect([await membersOf(A.slug, oA), await teamInvites(A.slug, oA)]).toEqual(before);
  });
});

describe("B4 someone else's invite", () => {
  it.each([
    ['accepts', 'POST', 'accept'],
    ['declines', 'POST', 'decline'],
    ['previews', 'GET', ''],
  ] as const)("x %s inv's invite -> 403 invite_email_mismatch, still pending, x not a member", async (_verb, method, action) => {
    const res = await api.call(method, `/api/invites/${invA.uuid}${action ? `/${action}` : ''}`, { token: x.token });
    expectError(res, 403, 'invite_email_mismatch');
    expectNoneOf(res, teamASecrets());

    const seenByInvitee = await previewAs(invA.uuid, inv);
    expectOk(seenByInvitee);
    expect(seenByInvitee.body.data).toMatchObject({ uuid: invA.uuid, email: inv.email, status: 'PENDING' });
    expect((await teamInvites(A.slug, oA)).map((i) => i.uuid)).toContain(invA.uuid);
    expectError(await api.call('GET', `/api/teams/${A.slug}`, { token: x.token }), 404, 'not_found');
    expect((await membersOf(A.slug, oA)).map((m) => m.email)).not.toContain(x.email);
    expect((await api.call('GET', '/api/teams', { token: x.token })).body.data).toEqual([]);
  });

  it('GET /api/invites lists only the caller’s own invites', async () => {
    const mine = await api.call('GET', '/api/invites', { token: x.token });
    expectOk(mine);
    expect(mine.body.data.map((i: InviteRow) => i.uuid)).toEqual([invX.uuid]);
    expect(mine.body.data.every((i: InviteRow) => i.email === x.email)).toBe(true);

    const theirs = await api.call('GET', '/api/invites', { token: inv.token });
    expect(theirs.body.data.map((i: InviteRow) => i.uuid)).toEqual([invA.uuid]);
    // The inviters see nothing of the invites they sent in their own inbox.
    expect((await api.call('GET', '/api/invites', { token: oA.token })).body.data).toEqual([]);
    expect((await api.call('GET', '/api/invites', { token: oB.token })).body.data).toEqual([]);
  });
});

describe('B5 e-mail normalisation', () => {
  const tag = `${Date.now().toString(36)}${Math.floor(Math.random() * 1e6)}`;
  const bob = `bob-${tag}@example.com`;
  let bobUser: TestUser;
  let bobInvite: InviteRow;

  beforeAll(async () => {
    bobUser = must((await signUpAs(bob)).user, 'bob');
    // Mixed case and a trailing space: stored trimmed and lowercased.
    bobInvite = await invite(A.slug, oA, `Bob-${tag}@Example.COM `);
  });

  it('stores the invited address trimmed and lowercased', () => {
    expect(bobInvite).toMatchObject({ email: bob, status: 'PENDING' });
  });

  it('one account per address: the same address in other case is taken', async () => {
    expectError((await signUpAs(`  BOB-${tag}@EXAMPLE.com`)).res, 409, 'email_taken');
  });

  it('a plus-address is another address: 403 on accept, decline and preview', async () => {
    const { token } = must((await signUpAs(`bob-${tag}+x@example.com`)).user, 'the plus-address user');
    expectError(await api.call('POST', `/api/invites/${bobInvite.uuid}/accept`, { token }), 403, 'invite_email_mismatch');
    expectError(await api.call('POST', `/api/invites/${bobInvite.uuid}/decline`, { token }), 403, 'invite_email_mismatch');
    expectError(await api.call('GET', `/api/invites/${bobInvite.uuid}`, { token }), 403, 'invite_email_mismatch');
    expect((await api.call('GET', '/api/invites', { token })).body.data).toEqual([]);
  });

  // The schema accepts ASCII addresses only, so a homoglyph address can neither sign up nor be invited.
  it.each([
    ['Cyrillic о in the local part', `b\u043eb-${tag}@example.com`],
    ['Cyrillic а in the domain', `bob-${tag}@ex\u0430mple.com`],
  ])('a homoglyph address (%s) cannot sign up or be invited: 422', async (_what, address) => {
    const signup = (await signUpAs(address)).res;
    expectError(signup, 422, 'validation_failed');
    expect(signup.body.error.fields).toHaveProperty('email');
    const invited = await api.call('POST', `/api/teams/${A.slug}/invites`, { token: oA.token, json: { email: address, role: 'MEMBER' } });
    expectError(invited, 422, 'validation_failed');
    expect(invited.body.error.fields).toHaveProperty('email');
  });

  it('the addressee, signed up as the lowercase address, sees and accepts it', async () => {
    expectOk(await previewAs(bobInvite.uuid, bobUser));
    const mine = await api.call('GET', '/api/invites', { token: bobUser.token });
    expect(mine.body.data.map((i: InviteRow) => i.uuid)).toEqual([bobInvite.uuid]);
    expectOk(await api.call('POST', `/api/invites/${bobInvite.uuid}/accept`, { token: bobUser.token }));
    expect(await memberNamed(A.slug, oA, bobUser)).toMatchObject({ role: 'MEMBER' });
  });
});

// ---------------------------------------------------------------------------------------------
// D: object-property-level authorization and mass assignment
// ---------------------------------------------------------------------------------------------

const LONG_AGO = '2000-01-01T00:00:00.000Z';

describe('D1 team update ignores extra fields', () => {
  it('changes only name and slug; id, counters, timestamps and members stay', async () => {
    const t = await createTeam(api, oA, freshSlug('d1'));
    const before = await api.call('GET', `/api/teams/${t.slug}`, { token: oA.token });
    const storedBefore = must(await storedTeam(t.id), 'team item');
    const newSlug = freshSlug('d1-moved');
    const res = await api.call('PUT', `/api/teams/${t.slug}`, {
      token: oA.token,
      json: {
        name: 'Renamed',
        slug: newSlug,
        id: 999,
        teamId: 999,
        ownerCount: 9,
        memberCount: 50,
        createdAt: LONG_AGO,
        updatedAt: LONG_AGO,
        logo: 'https://evil.test/logo.png',
        ownerId: x.uuid,
        members: [{ email: x.email, role: 'OWNER' }],
      },
    });
    expectOk(res);
    expect(res.body.data).toEqual({ ...before.body.data, name: 'Renamed', slug: newSlug, updatedAt: expect.any(String) });
    expect(res.body.data.updatedAt > LONG_AGO).toBe(true);

    const moved = await api.call('GET', `/api/teams/${newSlug}`, { token: oA.token });
    expect(moved.body.data).toEqual(res.body.data);
    expectError(await api.call('GET', `/api/teams/${t.slug}`, { token: oA.token }), 404, 'not_found');
    expectError(await api.call('GET', `/api/teams/${newSlug}`, { token: x.token }), 404, 'not_found');
    expect((await membersOf(newSlug, oA)).map((m) => [m.email, m.role])).toEqual([[oA.email, 'OWNER']]);

    const storedAfter = must(await storedTeam(t.id), 'team item');
    expect(storedAfter).toMatchObject({ name: 'Renamed', slug: newSlug, updatedAt: res.body.data.updatedAt, ownerCount: 1 });
    expect(omit(storedAfter, 'name', 'slug', 'updatedAt')).toEqual(omit(storedBefore, 'name', 'slug', 'updatedAt'));
    // ownerCount is really still 1: the sole owner cannot step down.
    const self = must(await memberNamed(newSlug, oA, oA), 'oA');
    expectError(
      await api.call('PUT', `/api/teams/${newSlug}/members/${self.id}`, { token: oA.token, json: { role: 'ADMIN' } }),
      409,
      'last_owner',
    );
  });
});

describe('D2 role update ignores extra fields', () => {
  it('aA changes only the role of mA, whatever userId/teamId/ids the body names', async () => {
    const t = await teamWithRoles();
    const target = must(await memberNamed(t.slug, oA, mA), 'mA');
    const storedBefore = must(await storedMembership(t.id, mA.uuid), 'membership item');
    const bBefore = await membersOf(B.slug, oB);

    const res = await api.call('PUT', `/api/teams/${t.slug}/members/${target.id}`, {
      token: aA.token,
      json: {
        role: 'ADMIN',
        userId: oBUserId,
        teamId: B.id,
        id: oBMemberId,
        memberId: oBMemberId,
        userUuid: oB.uuid,
        email: oB.email,
        createdAt: LONG_AGO,
      },
    });
    expectOk(res);
    expect(res.body.data).toEqual({
      id: target.id,
      teamId: t.id,
      userId: target.userId,
      role: 'ADMIN',
      createdAt: target.createdAt,
      updatedAt: expect.any(String),
    });
    const storedAfter = must(await storedMembership(t.id, mA.uuid), 'membership item');
    expect(storedAfter).toMatchObject({ role: 'ADMIN', updatedAt: res.body.data.updatedAt });
    expect(omit(storedAfter, 'role', 'updatedAt')).toEqual(omit(storedBefore, 'role', 'updatedAt'));
    expect(await memberNamed(t.slug, oA, mA)).toMatchObject({ id: target.id, userId: target.userId, role: 'ADMIN', email: mA.email });
    expect(await membersOf(B.slug, oB)).toEqual(bBefore);
    expect(await storedMembership(t.id, oB.uuid)).toBeNull();
  });
});

describe('D3 invite creation ignores extra fields', () => {
  it('is for team A, PENDING, invited by the caller, with the default 7-day expiry', async () => {
    const email = freshEmail('d3');
    const forgedUuid = randomUUID();
    const res = await api.call('POST', `/api/teams/${A.slug}/invites`, {
      token: aA.token,
      json: {
        email,
        role: 'MEMBER',
        teamId: B.id,
        team: { id: B.id, slug: B.slug },
        status: 'ACCEPTED',
        invitedBy: { id: oBUserId, email: oB.email },
        invitedByUuid: oB.uuid,
        expiresAt: '2999-01-01T00:00:00.000Z',
        createdAt: LONG_AGO,
        uuid: forgedUuid,
        id: 1,
        ttl: 1,
      },
    });
    expectOk(res, 201);
    expect(res.body.data).toEqual({});

    const created = must(
      (await teamInvites(A.slug, oA)).find((i) => i.email === email),
      'the new invite',
    );
    const aARow = must(await memberNamed(A.slug, oA, aA), 'aA');
    expect(created).toMatchObject({ teamId: A.id, team: { id: A.id, slug: A.slug }, role: 'MEMBER', status: 'PENDING' });
    expect(created.invitedBy).toEqual({ id: aARow.userId, email: aA.email, firstName: 'aa', lastName: 'Tester' });
    expect(created.uuid).not.toBe(forgedUuid);
    expect(created.id).not.toBe(1);
    expect(Date.now() - Date.parse(created.createdAt)).toBeLessThan(60_000);
    expect(Date.parse(created.expiresAt) - Date.parse(created.createdAt)).toBe(7 * 86_400_000);
    expect((await teamInvites(B.slug, oB)).map((i) => i.email)).not.toContain(email);

    // The addressee sees it as a pending invite of team A.
    const { token } = must((await signUpAs(email)).user, 'the invitee');
    const mine = await api.call('GET', '/api/invites', { token });
    expect(mine.body.data).toEqual([expect.objectContaining({ uuid: created.uuid, teamId: A.id, status: 'PENDING' })]);
  });
});

describe('D4 duplicate keys and type confusion', () => {
  let t: { slug: string; id: number };
  let mAId: number;

  beforeAll(async () => {
    t = await teamWithRoles();
    mAId = must(await memberNamed(t.slug, oA, mA), 'mA').id;
  });

  const roleOfMA = async (): Promise<string | undefined> => (await memberNamed(t.slug, oA, mA))?.role;

  it('{"role":"MEMBER","role":"OWNER"} from an ADMIN: the last key wins and is refused (403)', async () => {
    const res = await sendRaw('PUT', `/api/teams/${t.slug}/members/${mAId}`, aA.token, '{"role":"MEMBER","role":"OWNER"}');
    expectError(res, 403, 'forbidden');
    expect(await roleOfMA()).toBe('MEMBER');
  });

  it('the same trick on invite creation by an ADMIN is refused and writes no invite', async () => {
    const email = freshEmail('d4');
    const res = await sendRaw('POST', `/api/teams/${t.slug}/invites`, aA.token, `{"email":"${email}","role":"MEMBER","role":"OWNER"}`);
    expectError(res, 403, 'forbidden');
    expect((await teamInvites(t.slug, oA)).map((i) => i.email)).not.toContain(email);
  });

  // Sent by the OWNER, so a refusal comes from validation, not from the role check.
  it.each([
    ['{"role":["OWNER"]}', 400, 'invalid_body'],
    ['{"role":1}', 400, 'invalid_body'],
    ['{"role":true}', 400, 'invalid_body'],
    ['{"role":null}', 400, 'invalid_body'],
    ['{"role":{"toString":"OWNER"}}', 400, 'invalid_body'],
    ['{"role":"owner"}', 422, 'validation_failed'],
    ['{"role":" OWNER"}', 422, 'validation_failed'],
  ] as const)('%s -> %i %s, role unchanged', async (raw, status, code) => {
    const res = await sendRaw('PUT', `/api/teams/${t.slug}/members/${mAId}`, oA.token, raw);
    expectError(res, status, code);
    expect(res.body.error.fields).toHaveProperty('role');
    expect(await roleOfMA()).toBe('MEMBER');
  });
});

describe('D6 prototype pollution', () => {
  let t: { slug: string; id: number };
  let mAId: number;

  beforeAll(async () => {
    t = await teamWithRoles();
    mAId = must(await memberNamed(t.slug, oA, mA), 'mA').id;
  });

  it.each([
    ['{"__proto__":{"role":"OWNER"}}', 422],
    ['{"constructor":{"prototype":{"role":"OWNER"}}}', 422],
    ['{"role":"MEMBER","__proto__":{"role":"OWNER"}}', 200],
    ['{"role":"MEMBER","constructor":{"prototype":{"role":"OWNER"}}}', 200],
  ] as const)('role update by an ADMIN with %s -> %i, mA stays MEMBER', async (raw, status) => {
    const res = await sendRaw('PUT', `/api/teams/${t.slug}/members/${mAId}`, aA.token, raw);
    if (status === 200) {
      expectOk(res);
      expect(res.body.data.role).toBe('MEMBER');
    } else {
      expectError(res, 422, 'validation_failed');
      expect(res.body.error.fields).toEqual({ role: 'is required' });
    }
    expect((await memberNamed(t.slug, oA, mA))?.role).toBe('MEMBER');
  });

  it('invite creation: a role only under __proto__ is missing (422); beside a real role it is ignored', async () => {
    const missing = freshEmail('d6');
    const refused = await sendRaw('POST', `/api/teams/${t.slug}/invites`, aA.token, `{"email":"${missing}","__proto__":{"role":"OWNER"}}`);
    expectError(refused, 422, 'validation_failed');
    const ignored = freshEmail('d6');
    const created = await sendRaw(
      'POST',
      `/api/teams/${t.slug}/invites`,
      aA.token,
      `{"email":"${ignored}","role":"MEMBER","__proto__":{"role":"OWNER"}}`,
    );
    expectOk(created, 201);
    const emails = new Map((await teamInvites(t.slug, oA)).map((i) => [i.email, i.role]));
    expect(emails.has(missing)).toBe(false);
    expect(emails.get(ignored)).toBe('MEMBER');
  });

  it('team update with name and slug only under __proto__ is refused (422), the team unchanged', async () => {
    const before = await api.call('GET', `/api/teams/${t.slug}`, { token: oA.token });
    const res = await sendRaw(
      'PUT',
      `/api/teams/${t.slug}`,
      oA.token,
      `{"__proto__":{"name":"Polluted","slug":"${freshSlug('polluted')}"}}`,
    );
    expectError(res, 422, 'validation_failed');
    expect(Object.keys(res.body.error.fields).sort()).toEqual(['name', 'slug']);
    expect((await api.call('GET', `/api/teams/${t.slug}`, { token: oA.token })).body.data).toEqual(before.body.data);
  });

  it('team creation and sign-up ignore __proto__ members', async () => {
    const slug = freshSlug('d6-new');
    const created = await sendRaw(
      'POST',
      '/api/teams',
      x.token,
      `{"name":"Mine","slug":"${slug}","__proto__":{"ownerCount":0,"role":"MEMBER"}}`,
    );
    expectOk(created, 201);
    expect((await storedTeam(created.body.data.id))?.ownerCount).toBe(1);
    expect((await membersOf(slug, x)).map((m) => m.role)).toEqual(['OWNER']);

    const email = freshEmail('d6-signup');
    const signup = await sendRaw(
      'POST',
      '/api/auth/signup',
      '',
      `{"email":"${email}","password":"correct horse battery staple","firstName":"P","lastName":"Q","__proto__":{"role":"service_role","aud":"admin"}}`,
    );
    expectOk(signup, 201);
    expect(signup.body.data.session.user).toMatchObject({ email, role: 'authenticated', aud: 'authenticated' });
  });

  it('leaves Object.prototype clean in the process that ran the handlers', () => {
    // The local server runs the handlers in this very process, so pollution would show here.
    expect(({} as Record<string, unknown>).role).toBeUndefined();
    for (const key of ['role', 'name', 'slug', 'email', 'ownerCount', 'aud']) {
      expect(Object.prototype.hasOwnProperty.call(Object.prototype, key), key).toBe(false);
    }
  });
});

describe('D5 responses carry only wire fields', () => {
  it('every response of this file stayed within the allowlist', () => {
    expect(allViolations).toEqual([]);
    // The walk saw every kind of body: session, team, member, membership, invite, validation error.
    for (const key of ['access_token', 'user_metadata', 'logo', 'userId', 'invitedBy', 'expiresAt', 'fields', 'error']) {
      expect([...keysSeen], key).toContain(key);
    }
    expect(responsesWalked).toBeGreaterThan(100);
  });
});
