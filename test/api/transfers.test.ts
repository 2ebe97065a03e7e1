/**
 * Ownership transfer by consent (lib/teams/transfers.ts) through the local server: nominate, accept,
 * decline, cancel, who may do what, expiry, the nominee's e-mail (the table's stream, the mailer, a
 * real SMTP server in this process), the team's deletion, and races with real concurrent requests.
 * After every change the team's owners are checked the way races.test.ts's I1 checks them: at
 * least one OWNER membership, and `ownerCount` equal to their number.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '#infra/dynamodb-local.ts';
import type { LocalBackground } from '#infra/local-background.ts';
import { type Reply, type TestUser, addMember, createTeam, signUp, useApi } from '../helpers/api.ts';
import { testSmtp } from '../helpers/smtp.ts';
import { race, sweep } from '../helpers/race.ts';

const PUBLIC_URL = 'https://roster.example.com';
const smtpPort = await freePort();
// Read when the handlers and the mailer load, which is only after this (lib modules are imported below).
process.env.SMTP_URL = `smtp://127.0.0.1:${smtpPort}`;
process.env.MAIL_FROM = 'Roster <noreply@roster.example.com>';
process.env.PUBLIC_URL = PUBLIC_URL;
// Small enough to reach in a test; every team here sends fewer (invitations and nominations).
process.env.INVITE_MAILS_PER_TEAM_HOUR = '6';

const { db } = await import('#lib/db/service.ts');
const { claimsOf } = await import('#lib/auth/session-items.ts');
const { acceptTransfer, createTransfer } = await import('#lib/teams/transfers.ts');
const { AppError } = await import('#lib/core/errors.ts');
const { pausedBeforeFirstWrite } = await import('../helpers/paused.ts');

const api = useApi();
const { inbox, start: startSmtp, stop: stopSmtp } = testSmtp(() => smtpPort);
let background: LocalBackground | undefined;

beforeAll(async () => {
  await startSmtp();
  const { startLocalBackground } = await import('#infra/local-background.ts');
  background = await startLocalBackground({
    baseDelayMs: 200,
    maxDelayMs: 1000,
  });
});
afterAll(async () => {
  await background?.stop();
  await stopSmtp();
});

// ---------------------------------------------------------------------------------------------

const code = (r: Reply): string | undefined => (typeof r.body === 'object' && r.body !== null ? r.body.error?.code : undefined);
/** "409 transfer_stale", "200": what a reply is, for counting and for messages. */
const outcome = (r: Reply): string => [r.status, code(r)].filter((part) => part !== undefined).join(' ');

interface Team {
  slug: string;
  id: number;
  /** Member ids by user e-mail. */
  ids: Map<string, number>;
}

/** A team of `owner`, with `others` added by invitation in their roles. */
const teamWith = async (owner: TestUser, ...others: [TestUser, 'OWNER' | 'ADMIN' | 'MEMBER'][]): Promise<Team> => {
  const { slug, id } = await createTeam(api, owner);
  const ids = new Map<string, number>();
  for (const [user, role] of others) ids.set(user.email, await addMember(api, slug, owner, user, role));
  const listed = await api.call('GET', `/api/teams/${slug}/members`, { token: owner.token });
  ids.set(owner.email, listed.body.data.find((m: { email: string }) => m.email === owner.email).id);
  return { slug, id, ids };
};

const idOf = (team: Team, user: TestUser): number => team.ids.get(user.email) as number;

const nominate = (team: Team, by: TestUser, memberId: unknown) =>
  api.call('POST', `/api/teams/${team.slug}/transfer`, { token: by.token, json: { memberId } });
const answer = (team: Team, as: TestUser, verb: 'accept' | 'decline') =>
  api.call('POST', `/api/teams/${team.slug}/transfer/${verb}`, { token: as.token });
const cancel = (team: Team, as: TestUser) => api.call('DELETE', `/api/teams/${team.slug}/transfer`, { token: as.token });

/** Role by e-mail, from the stored memberships (the base table, strongly consistent). */
const rolesOf = async (team: Team): Promise<Map<string, string>> => {
  const members = (await db().entities.membership.query.primary({ teamId: team.id }).go({ consistent: true, pages: 'all' })).data;
  const users = await Promise.all(members.map((m) => db().entities.user.get({ userUuid: m.userUuid }).go({ consistent: true })));
  return new Map(members.map((m, i) => [users[i]?.data?.email ?? m.userUuid, m.role]));
};

/** I1 for one team: at least one OWNER, and the team's `ownerCount` equal to the OWNER memberships. Returns the owners' count. */
const expectOwnersConsistent = async (team: Team): Promise<number> => {
  const stored = (await db().entities.team.get({ teamId: team.id }).go({ consistent: true })).data;
  const owners = [...(await rolesOf(team)).values()].filter((role) => role === 'OWNER').length;
  expect(owners, `team ${team.slug} has no OWNER`).toBeGreaterThanOrEqual(1);
  expect(stored?.ownerCount, `team ${team.slug}: ownerCount vs OWNER memberships`).toBe(owners);
  return owners;
};

const storedTransfer = async (team: Team) => (await db().entities.transfer.get({ teamId: team.id }).go({ consistent: true })).data;

/** Waits until `count` messages whose subject matches `about` went to `to`, then a little longer to catch a duplicate. */
const mailsTo = async (to: string, about: RegExp, count = 1, withinMs = 20_000) => {
  const mine = () => inbox.filter((m) => m.to.includes(to) && about.test(m.subject));
  for (const deadline = Date.now() + withinMs; mine().length < count && Date.now() < deadline;) await sleep(50);
  await sleep(500);
  return mine();
};

const claimsOfUser = async (user: TestUser) => (await claimsOf(user.token)).claims;

/** The AppError code a use case threw, or 'ok'. */
const codeOf = (work: Promise<unknown>): Promise<string> =>
  work.then(
    () => 'ok',
    (error: unknown) => {
      if (error instanceof AppError) return error.code;
      throw error;
    },
  );

// ---------------------------------------------------------------------------------------------

describe('ownership transfer', () => {
  let owner: TestUser;
  let second: TestUser;
  let admin: TestUser;
  let member: TestUser;
  let other: TestUser;
  let stranger: TestUser;

  beforeAll(async () => {
    [owner, second, admin, member, other, stranger] = await Promise.all([
      signUp(api, 'owner'),
      signUp(api, 'second'),
      signUp(api, 'admin'),
      signUp(api, 'member'),
      signUp(api, 'other'),
      signUp(api, 'stranger'),
    ]);
  });

  it('nominates, mails the nominee, and on accept swaps OWNER and ADMIN in one step; the transfer is gone', async () => {
    const team = await teamWith(owner, [member, 'MEMBER']);
    const created = await nominate(team, owner, idOf(team, member));
    expect(created.status).toBe(201);
    const transfer = created.body.data;
    expect(transfer).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      team: { id: team.id, name: `Team ${team.slug}`, slug: team.slug },
      nominee: { memberId: idOf(team, member), userId: expect.any(Number), email: member.email, firstName: 'member', lastName: 'Tester' },
      nominatedBy: { userId: expect.any(Number), email: owner.email },
      createdAt: expect.any(String),
      expiresAt: expect.any(String),
    });
    expect(Date.parse(transfer.expiresAt) - Date.parse(transfer.createdAt)).toBe(7 * 86_400_000);
    const listed = (await api.call('GET', `/api/teams/${team.slug}/members`, { token: owner.token })).body.data;
    expect(transfer.nominee.userId).toBe(listed.find((m: { email: string }) => m.email === member.email).userId);

    // The nominee's e-mail, through the outbox and the mailer: who proposes what, until when, and where to answer.
    const [mail] = await mailsTo(member.email, /proposes to make you an owner/);
    expect(mail?.subject).toBe(`owner Tester proposes to make you an owner of Team ${team.slug} on Roster`);
    expect(mail?.text).toContain(`(${owner.email}) proposes to hand you their ownership of the team "Team ${team.slug}"`);
    expect(mail?.text).toContain(`POST ${PUBLIC_URL}/api/teams/${team.slug}/transfer/accept`);
    expect(mail?.text).toContain(`POST ${PUBLIC_URL}/api/teams/${team.slug}/transfer/decline`);
    expect(mail?.html).toContain(`POST ${PUBLIC_URL}/api/teams/${team.slug}/transfer/accept`);
    expect(mail?.html).not.toContain('href="https://roster.example.com/api');

    const accepted = await answer(team, member, 'accept');
    expect(accepted.status).toBe(200);
    expect(accepted.body).toEqual({ data: {} });
    const roles = await rolesOf(team);
    expect([roles.get(member.email), roles.get(owner.email)]).toEqual(['OWNER', 'ADMIN']);
    expect(await expectOwnersConsistent(team)).toBe(1);
    expect(await storedTransfer(team)).toBeNull();
    // Done once: a second accept finds nothing open.
    expect(outcome(await answer(team, member, 'accept'))).toBe('404 not_found');
    // The new owner now runs the team; the old one, an ADMIN, can no longer nominate.
    expect(outcome(await nominate(team, owner, idOf(team, member)))).toBe('403 forbidden');
  });

  it('keeps one open transfer per team: a new nomination replaces the open one', async () => {
    const team = await teamWith(owner, [member, 'MEMBER'], [admin, 'ADMIN']);
    const first = await nominate(team, owner, idOf(team, member));
    const replacing = await nominate(team, owner, idOf(team, admin));
    expect([first.status, replacing.status]).toEqual([201, 201]);
    expect(replacing.body.data.id).not.toBe(first.body.data.id);
    expect((await storedTransfer(team))?.transferId).toBe(replacing.body.data.id);
    // The first nominee is no longer the nominee; the second is.
    expect(outcome(await answer(team, member, 'accept'))).toBe('403 forbidden');
    expect(outcome(await answer(team, member, 'decline'))).toBe('403 forbidden');
    expect(outcome(await answer(team, admin, 'accept'))).toBe('200');
    const roles = await rolesOf(team);
    expect([roles.get(admin.email), roles.get(owner.email), roles.get(member.email)]).toEqual(['OWNER', 'ADMIN', 'MEMBER']);
    await expectOwnersConsistent(team);
  });

  it('lets the nominee decline: nothing changes, and the transfer is gone', async () => {
    const team = await teamWith(owner, [member, 'MEMBER']);
    expect((await nominate(team, owner, idOf(team, member))).status).toBe(201);
    const declined = await answer(team, member, 'decline');
    expect(declined.status).toBe(200);
    expect(declined.body).toEqual({ data: {} });
    expect(await storedTransfer(team)).toBeNull();
    expect(outcome(await answer(team, member, 'accept'))).toBe('404 not_found');
    expect(outcome(await answer(team, member, 'decline'))).toBe('404 not_found');
    const roles = await rolesOf(team);
    expect([roles.get(owner.email), roles.get(member.email)]).toEqual(['OWNER', 'MEMBER']);
    await expectOwnersConsistent(team);
  });

  it('lets the nominating owner withdraw it, and nobody else', async () => {
    const team = await teamWith(owner, [second, 'OWNER'], [member, 'MEMBER']);
    expect((await nominate(team, owner, idOf(team, member))).status).toBe(201);
    // Another owner and the nominee may not withdraw it (the nominee declines instead).
    expect(outcome(await cancel(team, second))).toBe('403 forbidden');
    expect(outcome(await cancel(team, member))).toBe('403 forbidden');
    const cancelled = await cancel(team, owner);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toEqual({ data: {} });
    expect(await storedTransfer(team)).toBeNull();
    expect(outcome(await answer(team, member, 'accept'))).toBe('404 not_found');
    expect(outcome(await cancel(team, owner))).toBe('404 not_found');
    expect((await rolesOf(team)).get(member.email)).toBe('MEMBER');
    await expectOwnersConsistent(team);
  });

  it('allows only an OWNER to nominate, only the nominee to answer, and hides the team from non-members (404)', async () => {
    const team = await teamWith(owner, [admin, 'ADMIN'], [member, 'MEMBER'], [other, 'MEMBER']);
    expect(outcome(await nominate(team, admin, idOf(team, member)))).toBe('403 forbidden');
    expect(outcome(await nominate(team, member, idOf(team, other)))).toBe('403 forbidden');
    expect(outcome(await nominate(team, stranger, idOf(team, member)))).toBe('404 not_found');
    expect(outcome(await answer(team, member, 'accept'))).toBe('404 not_found');

    expect((await nominate(team, owner, idOf(team, member))).status).toBe(201);
    for (const verb of ['accept', 'decline'] as const) {
      expect(outcome(await answer(team, other, verb))).toBe('403 forbidden');
      expect(outcome(await answer(team, admin, verb))).toBe('403 forbidden');
      // The nominating owner cannot accept for the nominee either.
      expect(outcome(await answer(team, owner, verb))).toBe('403 forbidden');
      expect(outcome(await answer(team, stranger, verb))).toBe('404 not_found');
    }
    expect(outcome(await cancel(team, stranger))).toBe('404 not_found');
    expect(outcome(await cancel(team, admin))).toBe('403 forbidden');
    // Still open, for the nominee only.
    expect((await storedTransfer(team))?.nomineeMemberId).toBe(idOf(team, member));
    expect(outcome(await answer(team, member, 'accept'))).toBe('200');
    await expectOwnersConsistent(team);
  });

  it('refuses nominating yourself, an OWNER, or no member of the team; and bodies without a member id', async () => {
    const team = await teamWith(owner, [second, 'OWNER'], [member, 'MEMBER']);
    const self = await nominate(team, owner, idOf(team, owner));
    expect(outcome(self)).toBe('422 validation_failed');
    expect(self.body.error.fields.memberId).toMatch(/another member/);
    const anOwner = await nominate(team, owner, idOf(team, second));
    expect(outcome(anOwner)).toBe('422 validation_failed');
    expect(anOwner.body.error.fields.memberId).toBe('is an owner already');
    expect(outcome(await nominate(team, owner, 123_456_789))).toBe('404 not_found');
    // A member of another team is no member of this one.
    const elsewhere = await teamWith(second, [other, 'MEMBER']);
    expect(outcome(await nominate(team, owner, idOf(elsewhere, other)))).toBe('404 not_found');
    for (const memberId of [0, -3, 1.5, 2 ** 60, undefined]) {
      const res = await nominate(team, owner, memberId);
      expect(outcome(res), JSON.stringify(memberId)).toBe('422 validation_failed');
      expect(res.body.error.fields.memberId).toBeDefined();
    }
    // Another JSON type than a number is 400, as for every body field.
    for (const [memberId, type] of [
      ['12', 'string'],
      [true, 'boolean'],
      [null, 'null'],
    ] as const) {
      const res = await nominate(team, owner, memberId);
      expect(outcome(res)).toBe('400 invalid_body');
      expect(res.body.error.fields.memberId).toBe(`must be a number, not ${type}`);
    }
    expect(await storedTransfer(team)).toBeNull();
  });

  it('answers 404 once the transfer has expired: accept, decline and cancel alike', async () => {
    const team = await teamWith(owner, [member, 'MEMBER']);
    expect((await nominate(team, owner, idOf(team, member))).status).toBe(201);
    // Seven days on, through the use case with its own clock.
    const later = new Date(Date.now() + 7 * 86_400_000 + 1000);
    expect(await codeOf(acceptTransfer(db(), await claimsOfUser(member), team.slug, later))).toBe('not_found');
    // Through the API: the stored transfer ran out a moment ago.
    const stored = await storedTransfer(team);
    if (!stored) throw new Error('no transfer stored');
    await db()
      .entities.transfer.put({ ...stored, expiresAt: new Date(Date.now() - 1000).toISOString() })
      .go();
    expect(outcome(await answer(team, member, 'accept'))).toBe('404 not_found');
    expect(outcome(await answer(team, member, 'decline'))).toBe('404 not_found');
    expect(outcome(await cancel(team, owner))).toBe('404 not_found');
    expect((await rolesOf(team)).get(member.email)).toBe('MEMBER');
    // A new nomination replaces the expired one.
    expect((await nominate(team, owner, idOf(team, member))).status).toBe(201);
    expect(outcome(await answer(team, member, 'accept'))).toBe('200');
    await expectOwnersConsistent(team);
  });

  it('spends the team’s mail allowance per nomination: refused ones give it back, and past it 429', async () => {
    // 6 an hour: 2 invitations here, then 4 nominations.
    const team = await teamWith(owner, [member, 'MEMBER'], [other, 'MEMBER']);
    expect(outcome(await nominate(team, owner, idOf(team, owner)))).toBe('422 validation_failed');
    // A nomination whose nominee leaves between its read and its write: 409, and its token goes back.
    const leaving = pausedBeforeFirstWrite(async () => {
      expect(outcome(await api.call('DELETE', `/api/teams/${team.slug}/members/${idOf(team, other)}`, { token: other.token }))).toBe('200');
    });
    expect(await codeOf(createTransfer(leaving, await claimsOfUser(owner), team.slug, { memberId: idOf(team, other) }, new Date()))).toBe(
      'conflict',
    );
    for (let i = 0; i < 4; i++) expect(outcome(await nominate(team, owner, idOf(team, member)))).toBe('201');
    const limited = await nominate(team, owner, idOf(team, member));
    expect(outcome(limited)).toBe('429 rate_limited');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('makes the transfer unacceptable when the team is deleted; the cleanup removes it with the team', async () => {
    const team = await teamWith(owner, [member, 'MEMBER']);
    expect((await nominate(team, owner, idOf(team, member))).status).toBe(201);
    expect(outcome(await api.call('DELETE', `/api/teams/${team.slug}`, { token: owner.token }))).toBe('200');
    expect(outcome(await answer(team, member, 'accept'))).toBe('404 not_found');
    for (const deadline = Date.now() + 30_000; Date.now() < deadline; await sleep(100)) {
      if (!(await db().entities.teamCleanup.get({ teamId: team.id }).go({ consistent: true })).data) break;
    }
    expect((await db().entities.teamCleanup.get({ teamId: team.id }).go({ consistent: true })).data).toBeNull();
    expect(await storedTransfer(team)).toBeNull();
  });

  describe('an accept that meets a change made between its read and its write', () => {
    /** Nominates `member` as `owner` (with `second` as another OWNER), then accepts with `meanwhile` run just before the write. */
    const acceptAfter = async (meanwhile: (team: Team) => Promise<void>) => {
      const team = await teamWith(owner, [second, 'OWNER'], [member, 'MEMBER']);
      expect((await nominate(team, owner, idOf(team, member))).status).toBe(201);
      const paused = pausedBeforeFirstWrite(() => meanwhile(team));
      return { team, code: await codeOf(acceptTransfer(paused, await claimsOfUser(member), team.slug, new Date())) };
    };
    const expect200 = async (r: Promise<Reply>) => expect(outcome(await r)).toBe('200');

    it.for([
      [
        'the nominator is removed by another owner',
        (t: Team) => expect200(api.call('DELETE', `/api/teams/${t.slug}/members/${idOf(t, owner)}`, { token: second.token })),
      ],
      [
        'the nominator is demoted',
        (t: Team) =>
          expect200(api.call('PUT', `/api/teams/${t.slug}/members/${idOf(t, owner)}`, { token: second.token, json: { role: 'ADMIN' } })),
      ],
      [
        'the nominator leaves',
        (t: Team) => expect200(api.call('DELETE', `/api/teams/${t.slug}/members/${idOf(t, owner)}`, { token: owner.token })),
      ],
      [
        'the nominee is made an OWNER',
        (t: Team) =>
          expect200(api.call('PUT', `/api/teams/${t.slug}/members/${idOf(t, member)}`, { token: second.token, json: { role: 'OWNER' } })),
      ],
    ] as const)('409 transfer_stale when %s; nothing else changes', async ([, meanwhile]) => {
      const { team, code } = await acceptAfter(meanwhile);
      expect(code).toBe('transfer_stale');
      expect(await storedTransfer(team)).not.toBeNull();
      await expectOwnersConsistent(team);
    });

    it('409 when the nominee leaves (the transfer stays unacceptable); 404 when it is withdrawn or the team is deleted', async () => {
      const left = await acceptAfter((t) =>
        expect200(api.call('DELETE', `/api/teams/${t.slug}/members/${idOf(t, member)}`, { token: member.token })),
      );
      expect(left.code).toBe('transfer_stale');
      const withdrawn = await acceptAfter((t) => expect200(cancel(t, owner)));
      expect(withdrawn.code).toBe('not_found');
      const deleted = await acceptAfter((t) => expect200(api.call('DELETE', `/api/teams/${t.slug}`, { token: owner.token })));
      expect(deleted.code).toBe('not_found');
      for (const { team } of [left, withdrawn]) await expectOwnersConsistent(team);
    });

    it('403 when another owner replaced it with a nomination of someone else', async () => {
      const { team, code } = await acceptAfter(async (t) => {
        t.ids.set(other.email, await addMember(api, t.slug, second, other, 'MEMBER'));
        expect((await nominate(t, second, idOf(t, other))).status).toBe(201);
      });
      expect(code).toBe('forbidden');
      expect((await rolesOf(team)).get(member.email)).toBe('MEMBER');
    });
  });
});

// ---------------------------------------------------------------------------------------------
// Races with real concurrent requests: several rounds each, the interleavings swept.

/** Rounds per race; each builds a fresh team. */
const ROUNDS = 8;

const tally = (counts: Map<string, number>, ...replies: Reply[]) => {
  for (const r of replies) counts.set(outcome(r), (counts.get(outcome(r)) ?? 0) + 1);
};
const show = (counts: Map<string, number>): string => [...counts].map(([k, n]) => `${k}: ${n}`).join(', ');

describe('races: the team never ends a round without an owner, and ownerCount stays exact', () => {
  let nominator: TestUser;
  let otherOwner: TestUser;
  let nominee: TestUser;
  let secondNominee: TestUser;

  beforeAll(async () => {
    [nominator, otherOwner, nominee, secondNominee] = await Promise.all([
      signUp(api, 'nominator'),
      signUp(api, 'co-owner'),
      signUp(api, 'nominee'),
      signUp(api, 'nominee2'),
    ]);
  });

  /** A team of the nominator, the other owner and the nominee (MEMBER), with the nominee nominated. */
  const nominated = async (): Promise<Team> => {
    const team = await teamWith(nominator, [otherOwner, 'OWNER'], [nominee, 'MEMBER']);
    expect((await nominate(team, nominator, idOf(team, nominee))).status).toBe(201);
    return team;
  };

  it.for([
    [
      'removed by another owner',
      (t: Team) => api.call('DELETE', `/api/teams/${t.slug}/members/${idOf(t, nominator)}`, { token: otherOwner.token }),
    ],
    [
      'demoted by another owner',
      (t: Team) =>
        api.call('PUT', `/api/teams/${t.slug}/members/${idOf(t, nominator)}`, { token: otherOwner.token, json: { role: 'MEMBER' } }),
    ],
    ['leaving', (t: Team) => api.call('DELETE', `/api/teams/${t.slug}/members/${idOf(t, nominator)}`, { token: nominator.token })],
  ] as const)('accept against the nominator %s', async ([, change], { annotate }) => {
    const counts = new Map<string, number>();
    for (let round = 0; round < ROUNDS; round++) {
      const team = await nominated();
      const [accepted, changed] = (await race(api, [() => answer(team, nominee, 'accept'), () => change(team)], sweep(round, 3))) as [
        Reply,
        Reply,
      ];
      tally(counts, accepted, changed);
      expect(['200', '409 transfer_stale']).toContain(outcome(accepted));
      // The change lands before the accept (then the accept is stale), or after it on an ADMIN, or
      // between the accept's commit and its own read of an OWNER (409 conflict).
      expect(['200', '409 conflict']).toContain(outcome(changed));
      const roles = await rolesOf(team);
      expect(roles.get(nominee.email)).toBe(accepted.status === 200 ? 'OWNER' : 'MEMBER');
      // One OWNER in and one out on accept; the change took the nominator's OWNER only if it came first.
      const owners = await expectOwnersConsistent(team);
      expect(owners).toBe(accepted.status === 200 ? 2 : 1);
    }
    await annotate(`${ROUNDS} rounds: ${show(counts)}`);
  });

  it('accept against the sole owner leaving: the owner is never gone before the nominee is one', async ({ annotate }) => {
    const counts = new Map<string, number>();
    for (let round = 0; round < ROUNDS; round++) {
      const team = await teamWith(nominator, [nominee, 'ADMIN']);
      expect((await nominate(team, nominator, idOf(team, nominee))).status).toBe(201);
      const leave = () => api.call('DELETE', `/api/teams/${team.slug}/members/${idOf(team, nominator)}`, { token: nominator.token });
      const [accepted, left] = (await race(api, [() => answer(team, nominee, 'accept'), leave], sweep(round, 3))) as [Reply, Reply];
      tally(counts, accepted, left);
      // Leaving first is refused (the last owner); so the accept always wins its owner.
      expect(outcome(accepted)).toBe('200');
      expect(['200', '409 last_owner', '409 conflict']).toContain(outcome(left));
      expect(await expectOwnersConsistent(team)).toBe(1);
      expect((await rolesOf(team)).get(nominee.email)).toBe('OWNER');
    }
    await annotate(`${ROUNDS} rounds: ${show(counts)}`);
  });

  it('two owners nominating two members, each nominee accepting at once', async ({ annotate }) => {
    const counts = new Map<string, number>();
    for (let round = 0; round < ROUNDS; round++) {
      const team = await teamWith(nominator, [otherOwner, 'OWNER'], [nominee, 'MEMBER'], [secondNominee, 'MEMBER']);
      const proposeAndAccept = (by: TestUser, who: TestUser) => async (): Promise<[Reply, Reply]> => {
        const proposed = await nominate(team, by, idOf(team, who));
        return [proposed, await answer(team, who, 'accept')];
      };
      const sides = (await race(
        api,
        [proposeAndAccept(nominator, nominee), proposeAndAccept(otherOwner, secondNominee)],
        sweep(round, 25),
      )) as [Reply, Reply][];
      for (const [proposed, accepted] of sides) {
        tally(counts, proposed, accepted);
        // The other side touches neither this nomination's owner nor its nominee: only a transaction
        // that kept conflicting with the other side's (409 `conflict`, safe to retry) is refused.
        expect(['201', '409 conflict']).toContain(outcome(proposed));
        // Replaced by the other nomination (403), or accepted and gone (404); a transaction that kept
        // conflicting with the other side's is 409 `conflict`, safe to retry.
        expect(['200', '403 forbidden', '404 not_found', '409 transfer_stale', '409 conflict']).toContain(outcome(accepted));
      }
      // Each accepted transfer moved one OWNER: the team has exactly its two owners, whoever they are.
      expect(await expectOwnersConsistent(team)).toBe(2);
      const roles = await rolesOf(team);
      for (const [i, [, accepted]] of sides.entries()) {
        if (accepted.status === 200) expect(roles.get((i === 0 ? nominee : secondNominee).email)).toBe('OWNER');
      }
    }
    await annotate(`${ROUNDS} rounds: ${show(counts)}`);
  });
});
