/**
 * CONTRACT.md "Who may do what", row by row and column by column, through HTTP (SECURITY-TESTS
 * 0.2, B7, C1-C6). Every row is `{ operation, actor, status, code }`; a row that may change state
 * runs on a team of its own, so no row depends on another. Besides the status, each row checks
 * that the state changed exactly when the call succeeded, and every refusal uses the envelope.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { type Reply, type TestUser, addMember, createTeam, freshEmail, freshSlug, signUp, useApi } from '../helpers/api.ts';

const api = useApi();

type Role = 'OWNER' | 'ADMIN' | 'MEMBER';

/** The people of the fixture. Signed up once; each team below enrols those it needs. */
const PEOPLE = ['owner', 'owner2', 'admin', 'admin2', 'member', 'member2', 'watcher', 'outsider', 'otherOwner'] as const;
type Person = (typeof PEOPLE)[number];
const people = {} as Record<Person, TestUser>;

/** The matrix's columns and who plays them: "not a member" is played by x (in no team) and oB (owner of B). */
const COLUMNS = ['OWNER', 'ADMIN', 'MEMBER', 'x (no team)', 'oB (owner of B)'] as const;
type Column = (typeof COLUMNS)[number];
const PLAYER: Record<Column, Person> = {
  OWNER: 'owner',
  ADMIN: 'admin',
  MEMBER: 'member',
  'x (no team)': 'outsider',
  'oB (owner of B)': 'otherOwner',
};

/** The error code a refusal must carry, by status. */
const CODE: Record<number, string> = { 403: 'forbidden', 404: 'not_found', 409: 'last_owner' };

interface TeamFixture {
  slug: string;
  id: number;
  name: string;
  /** Membership ids (the `{memberId}` of the member paths) of everyone enrolled. */
  memberIds: Partial<Record<Person, number>>;
  /** A pending invite of this team, to read and delete. */
  invite: { id: number; email: string };
}

/** The roles a team is built with, besides its creator `owner`. `watcher` only observes. */
const FULL_ROSTER: [Person, Role][] = [
  ['owner2', 'OWNER'],
  ['admin', 'ADMIN'],
  ['admin2', 'ADMIN'],
  ['member', 'MEMBER'],
  ['member2', 'MEMBER'],
  ['watcher', 'MEMBER'],
];

const teamPath = (t: TeamFixture): string => `/api/teams/${t.slug}`;

const memberIdOf = (t: TeamFixture, who: Person): number => {
  const id = t.memberIds[who];
  if (id === undefined) throw new Error(`${who} is not enrolled in ${t.slug}`);
  return id;
};

/** Builds team A: `owner` creates it, the roster joins through invites, and one invite stays pending. */
const buildTeam = async (roster: [Person, Role][] = FULL_ROSTER): Promise<TeamFixture> => {
  const { slug, id } = await createTeam(api, people.owner, freshSlug('perm'));
  const memberIds: Partial<Record<Person, number>> = {};
  for (const [who, role] of roster) memberIds[who] = await addMember(api, slug, people.owner, people[who], role);
  const members = await api.call('GET', `/api/teams/${slug}/members?limit=1000`, { token: people.owner.token });
  memberIds.owner = members.body.data.find((m: { email: string }) => m.email === people.owner.email).id;

  const email = freshEmail('pending');
  const invited = await api.call('POST', `/api/teams/${slug}/invites`, { token: people.owner.token, json: { email, role: 'MEMBER' } });
  expect(invited.status).toBe(201);
  const invites = await api.call('GET', `/api/teams/${slug}/invites`, { token: people.owner.token });
  const invite = invites.body.data.find((i: { email: string }) => i.email === email);
  return { slug, id, name: `Team ${slug}`, memberIds, invite: { id: invite.id, email } };
};

/** Role of `who` in the team as the watcher sees it; undefined once they are gone. */
const roleOf = async (t: TeamFixture, who: Person): Promise<Role | undefined> => {
  const res = await api.call('GET', `${teamPath(t)}/members?limit=1000`, { token: people.watcher.token });
  expect(res.status).toBe(200);
  return res.body.data.find((m: { email: string }) => m.email === people[who].email)?.role;
};

/** The contract's error envelope, with nothing else at the top level and a JSON content type. */
const expectError = (res: Reply, status: number, code: string): void => {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
  expect(Object.keys(res.body)).toEqual(['error']);
  expect(Object.keys(res.body.error).every((k) => ['code', 'message', 'fields'].includes(k))).toBe(true);
  expect(typeof res.body.error.message).toBe('string');
  expect(res.body.error.message.length).toBeGreaterThan(0);
};

const expectSuccess = (res: Reply, status: number): void => {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(Object.keys(res.body)).toEqual(['data']);
};

/** Asserts the row's answer: success with `{data}`, or the error envelope with the expected code. */
const expectAnswer = (res: Reply, status: number, code: string | undefined): void => {
  if (code === undefined) expectSuccess(res, status);
  else expectError(res, status, code);
};

interface Operation {
  /** Changes state: each of its rows gets a team of its own. */
  mutates: boolean;
  /** The roster its team needs (the sole-owner rows leave `owner2` out). */
  roster?: [Person, Role][];
  run: (t: TeamFixture, actor: Person) => Promise<Reply>;
  /** Checks that the effect happened exactly when the call succeeded (and not otherwise). */
  effect: (t: TeamFixture, actor: Person, succeeded: boolean, res: Reply) => Promise<void>;
}

type Target = Person | 'self';
const targetOf = (target: Target, actor: Person): Person => (target === 'self' ? actor : target);

const changeRole = (target: Target, to: Role, roster?: [Person, Role][]): Operation => ({
  mutates: true,
  ...(roster ? { roster } : {}),
  run: (t, actor) =>
    api.call('PUT', `${teamPath(t)}/members/${memberIdOf(t, targetOf(target, actor))}`, { token: people[actor].token, json: { role: to } }),
  effect: async (t, actor, succeeded, res) => {
    const who = targetOf(target, actor);
    // Everyone but the creator (`owner`, an OWNER) joined with the role the roster gives them.
    const before = (roster ?? FULL_ROSTER).find(([p]) => p === who)?.[1] ?? 'OWNER';
    expect(await roleOf(t, who)).toBe(succeeded ? to : before);
    if (succeeded) expect(res.body.data).toMatchObject({ id: memberIdOf(t, who), teamId: t.id, role: to });
  },
});

const removeMember = (target: Target, roster?: [Person, Role][]): Operation => ({
  mutates: true,
  ...(roster ? { roster } : {}),
  run: (t, actor) => api.call('DELETE', `${teamPath(t)}/members/${memberIdOf(t, targetOf(target, actor))}`, { token: people[actor].token }),
  effect: async (t, actor, succeeded, res) => {
    expect((await roleOf(t, targetOf(target, actor))) === undefined).toBe(succeeded);
    if (succeeded) expect(res.body.data).toEqual({});
  },
});

const createInvite = (role: Role): Operation => ({
  mutates: true,
  run: (t, actor) =>
    api.call('POST', `${teamPath(t)}/invites`, {
      token: people[actor].token,
      json: { email: `${role.toLowerCase()}-${t.slug}@example.com`, role },
    }),
  effect: async (t, _actor, succeeded) => {
    const list = await api.call('GET', `${teamPath(t)}/invites`, { token: people.owner.token });
    const found = list.body.data.find((i: { email: string }) => i.email === `${role.toLowerCase()}-${t.slug}@example.com`);
    expect(found?.role).toBe(succeeded ? role : undefined);
  },
});

/** Reads change nothing; their effect check is on the body a successful read returns. */
const read = (path: (t: TeamFixture) => string, body: (t: TeamFixture, actor: Person, data: unknown) => void): Operation => ({
  mutates: false,
  run: (t, actor) => api.call('GET', path(t), { token: people[actor].token }),
  effect: async (t, actor, succeeded, res) => {
    if (succeeded) body(t, actor, res.body.data);
  },
});

const SOLE_OWNER: [Person, Role][] = FULL_ROSTER.filter(([p]) => p !== 'owner2');

const OPERATIONS = {
  'read team': read(teamPath, (t, _a, data) => expect(data).toMatchObject({ id: t.id, slug: t.slug })),
  'list members': read(
    (t) => `${teamPath(t)}/members`,
    (t, actor, data) => expect((data as { email: string }[]).map((m) => m.email)).toContain(people[actor].email),
  ),
  'list invites': read(
    (t) => `${teamPath(t)}/invites`,
    (t, _a, data) => expect((data as { id: number }[]).map((i) => i.id)).toContain(t.invite.id),
  ),
  'read invite': read(
    (t) => `${teamPath(t)}/invites/${t.invite.id}`,
    (t, _a, data) => expect(data).toMatchObject({ id: t.invite.id, email: t.invite.email, teamId: t.id, status: 'PENDING' }),
  ),
  'update team': {
    mutates: true,
    run: (t, actor) => api.call('PUT', teamPath(t), { token: people[actor].token, json: { name: `Renamed by ${actor}`, slug: t.slug } }),
    effect: async (t, actor, succeeded) => {
      const team = await api.call('GET', teamPath(t), { token: people.watcher.token });
      expect(team.body.data.name).toBe(succeeded ? `Renamed by ${actor}` : t.name);
    },
  },
  'delete team': {
    mutates: true,
    run: (t, actor) => api.call('DELETE', teamPath(t), { token: people[actor].token }),
    effect: async (t, _actor, succeeded) => {
      const team = await api.call('GET', teamPath(t), { token: people.watcher.token });
      expect(team.status).toBe(succeeded ? 404 : 200);
    },
  },
  'create invite as MEMBER': createInvite('MEMBER'),
  'create invite as ADMIN': createInvite('ADMIN'),
  'create invite as OWNER': createInvite('OWNER'),
  'delete invite': {
    mutates: true,
    run: (t, actor) => api.call('DELETE', `${teamPath(t)}/invites/${t.invite.id}`, { token: people[actor].token }),
    effect: async (t, _actor, succeeded) => {
      const invite = await api.call('GET', `${teamPath(t)}/invites/${t.invite.id}`, { token: people.owner.token });
      expect(invite.status).toBe(succeeded ? 404 : 200);
    },
  },
  'change a MEMBER to ADMIN': changeRole('member2', 'ADMIN'),
  'change an ADMIN to MEMBER': changeRole('admin2', 'MEMBER'),
  'change a MEMBER to OWNER': changeRole('member2', 'OWNER'),
  'change an OWNER to ADMIN': changeRole('owner2', 'ADMIN'),
  'change an OWNER to MEMBER': changeRole('owner2', 'MEMBER'),
  'promote self to OWNER': changeRole('self', 'OWNER'),
  'demote self to MEMBER': changeRole('self', 'MEMBER'),
  'remove a MEMBER': removeMember('member2'),
  'remove an ADMIN': removeMember('admin2'),
  'remove an OWNER': removeMember('owner2'),
  'leave (remove self)': removeMember('self'),
  'sole owner demotes self to ADMIN': changeRole('self', 'ADMIN', SOLE_OWNER),
  'sole owner demotes self to MEMBER': changeRole('self', 'MEMBER', SOLE_OWNER),
  'sole owner leaves': removeMember('self', SOLE_OWNER),
  'change the sole OWNER to ADMIN': changeRole('owner', 'ADMIN', SOLE_OWNER),
  'remove the sole OWNER': removeMember('owner', SOLE_OWNER),
} satisfies Record<string, Operation>;
type OperationName = keyof typeof OPERATIONS;

interface Row {
  operation: OperationName;
  actor: Column;
  status: number;
  /** The error code of a refusal; undefined for a success. */
  code: string | undefined;
}

/** One matrix line: the expected status per column (null: the cell does not apply, e.g. x has no membership to leave). */
const line = (operation: OperationName, ...statuses: (number | null)[]): Row[] =>
  COLUMNS.flatMap((actor, i) => {
    const status = statuses[i];
    return status == null ? [] : [{ operation, actor, status, code: status >= 400 ? CODE[status] : undefined }];
  });

//                                            OWNER ADMIN MEMBER  x    oB
const MATRIX: Row[] = [
  ...line('read team', 200, 200, 200, 404, 404),
  ...line('list members', 200, 200, 200, 404, 404),
  ...line('update team', 200, 200, 403, 404, 404),
  ...line('delete team', 200, 403, 403, 404, 404),
  ...line('list invites', 200, 200, 403, 404, 404),
  ...line('read invite', 200, 200, 403, 404, 404),
  ...line('create invite as MEMBER', 201, 201, 403, 404, 404),
  ...line('create invite as ADMIN', 201, 201, 403, 404, 404),
  ...line('create invite as OWNER', 201, 403, 403, 404, 404),
  ...line('delete invite', 200, 200, 403, 404, 404),
  ...line('change a MEMBER to ADMIN', 200, 200, 403, 404, 404),
  ...line('change an ADMIN to MEMBER', 200, 200, 403, 404, 404),
  ...line('change a MEMBER to OWNER', 200, 403, 403, 404, 404),
  ...line('change an OWNER to ADMIN', 200, 403, 403, 404, 404),
  ...line('change an OWNER to MEMBER', 200, 403, 403, 404, 404),
  ...line('promote self to OWNER', 200, 403, 403, null, null),
  ...line('demote self to MEMBER', 200, 200, 403, null, null),
  ...line('remove a MEMBER', 200, 200, 403, 404, 404),
  ...line('remove an ADMIN', 200, 200, 403, 404, 404),
  ...line('remove an OWNER', 200, 403, 403, 404, 404),
  ...line('leave (remove self)', 200, 200, 200, null, null),
];

/** "A team always keeps at least one OWNER": the same operations on a team with a single owner. */
const LAST_OWNER: Row[] = [
  ...line('sole owner demotes self to ADMIN', 409, null, null, null, null),
  ...line('sole owner demotes self to MEMBER', 409, null, null, null, null),
  ...line('sole owner leaves', 409, null, null, null, null),
  ...line('change the sole OWNER to ADMIN', null, 403, 403, 404, 404),
  ...line('remove the sole OWNER', null, 403, 403, 404, 404),
];

const rowName = (r: Row): string => `${r.operation} as ${r.actor} -> ${r.status}${r.code ? ` ${r.code}` : ''}`;

let shared: TeamFixture;

/** Runs one row on its own team (or the shared one for reads) and checks answer and effect. */
const runRow = async (row: Row): Promise<void> => {
  const op: Operation = OPERATIONS[row.operation];
  const team = op.mutates ? await buildTeam(op.roster) : shared;
  const actor = PLAYER[row.actor];
  const res = await op.run(team, actor);
  expectAnswer(res, row.status, row.code);
  await op.effect(team, actor, res.status < 300, res);
};

beforeAll(async () => {
  // Lowercase names: the API returns e-mails lowercased, and the tests compare them.
  for (const who of PEOPLE) people[who] = await signUp(api, who.toLowerCase());
  await createTeam(api, people.otherOwner, freshSlug('team-b'));
  shared = await buildTeam();
});

describe('who may do what (CONTRACT.md matrix)', () => {
  it('covers every operation of the matrix with every column', () => {
    // Guards the table itself: a dropped line or column would otherwise shrink the matrix silently.
    const operations = new Set(MATRIX.map((r) => r.operation));
    expect(operations.size).toBe(21);
    for (const column of COLUMNS) expect(MATRIX.some((r) => r.actor === column)).toBe(true);
    expect(MATRIX.length + LAST_OWNER.length).toBe(110);
  });

  it.each(MATRIX.map((r) => [rowName(r), r] as const))('%s', async (_name, row) => {
    await runRow(row);
  });
});

describe('a team keeps at least one OWNER', () => {
  it.each(LAST_OWNER.map((r) => [rowName(r), r] as const))('%s', async (_name, row) => {
    await runRow(row);
  });

  it('lets one of two owners demote themselves, then refuses the remaining one', async () => {
    const t = await buildTeam();
    const first = await api.call('PUT', `${teamPath(t)}/members/${memberIdOf(t, 'owner')}`, {
      token: people.owner.token,
      json: { role: 'ADMIN' },
    });
    expectAnswer(first, 200, undefined);
    const second = await api.call('PUT', `${teamPath(t)}/members/${memberIdOf(t, 'owner2')}`, {
      token: people.owner2.token,
      json: { role: 'MEMBER' },
    });
    expectError(second, 409, 'last_owner');
    expect(await roleOf(t, 'owner2')).toBe('OWNER');
  });

  it('lets one of two owners leave, then refuses the remaining one', async () => {
    const t = await buildTeam();
    expectAnswer(
      await api.call('DELETE', `${teamPath(t)}/members/${memberIdOf(t, 'owner')}`, { token: people.owner.token }),
      200,
      undefined,
    );
    const second = await api.call('DELETE', `${teamPath(t)}/members/${memberIdOf(t, 'owner2')}`, { token: people.owner2.token });
    expectError(second, 409, 'last_owner');
    expect(await roleOf(t, 'owner2')).toBe('OWNER');
  });
});

/** Accept, decline and preview belong to the addressee alone, whatever role anyone else holds. */
describe('accept, decline, preview: the addressee only', () => {
  const INVITE_ACTIONS = ['accept', 'decline', 'preview'] as const;
  type InviteAction = (typeof INVITE_ACTIONS)[number];
  const INVITE_ACTORS = ['addressee', ...COLUMNS] as const;
  type InviteActor = (typeof INVITE_ACTORS)[number];

  const rows = INVITE_ACTIONS.flatMap((action) =>
    INVITE_ACTORS.map((actor) => ({
      operation: action,
      actor,
      status: actor === 'addressee' ? 200 : 403,
      code: actor === 'addressee' ? undefined : 'invite_email_mismatch',
    })),
  );

  const callInvite = (action: InviteAction, uuid: string, token: string): Promise<Reply> =>
    action === 'preview'
      ? api.call('GET', `/api/invites/${uuid}`, { token })
      : api.call('POST', `/api/invites/${uuid}/${action}`, { token });

  it('has a row for every action and actor', () => {
    expect(rows).toHaveLength(INVITE_ACTIONS.length * INVITE_ACTORS.length);
  });

  it.each(rows.map((r) => [`${r.operation} as ${r.actor} -> ${r.status}${r.code ? ` ${r.code}` : ''}`, r] as const))(
    '%s',
    async (_name, row) => {
      // A fresh addressee and invite per row: an accept or decline ends the invite.
      const addressee = await signUp(api, 'invitee');
      const invited = await api.call('POST', `/api/teams/${shared.slug}/invites`, {
        token: people.owner.token,
        json: { email: addressee.email, role: 'ADMIN' },
      });
      expect(invited.status).toBe(201);
      const mine = await api.call('GET', '/api/invites', { token: addressee.token });
      const uuid: string = mine.body.data.find((i: { team: { slug: string } }) => i.team.slug === shared.slug).uuid;
      const actor: TestUser = row.actor === 'addressee' ? addressee : people[PLAYER[row.actor as Exclude<InviteActor, 'addressee'>]];

      const res = await callInvite(row.operation, uuid, actor.token);
      expectAnswer(res, row.status, row.code);

      const after = await api.call('GET', `/api/invites/${uuid}`, { token: addressee.token });
      const addresseeInTeam = await api.call('GET', `/api/teams/${shared.slug}`, { token: addressee.token });
      if (row.operation === 'preview' || row.status !== 200) {
        // Nothing moved: still pending, the addressee not in the team.
        expect(after.status).toBe(200);
        expect(after.body.data).toMatchObject({ uuid, email: addressee.email, status: 'PENDING', role: 'ADMIN', teamId: shared.id });
        expect(addresseeInTeam.status).toBe(404);
      } else {
        expectError(after, 409, 'invite_not_pending');
        expect(addresseeInTeam.status).toBe(row.operation === 'accept' ? 200 : 404);
      }
      if (row.status === 200 && row.operation === 'preview') expect(res.body.data).toEqual(after.body.data);
      // The refused outsiders did not get in through someone else's invite either.
      if (row.actor === 'x (no team)' || row.actor === 'oB (owner of B)') {
        expect((await api.call('GET', `/api/teams/${shared.slug}`, { token: actor.token })).status).toBe(404);
      }
    },
  );
});
