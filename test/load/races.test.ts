/**
 * SECURITY-TESTS.md section 3, H: concurrent requests through the local server against one
 * DynamoDB Local table. Each scenario builds all its requests first and releases them together,
 * counts the statuses, and then runs the invariant checker (I1–I6) over the whole table. The team
 * cleanup runs on the table's stream as in local mode, and the checker waits for it to drain.
 */
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { config } from '#lib/core/config.ts';
import { createDocumentClient } from '#lib/db/client.ts';
import { claimsOf } from '#lib/auth/session-items.ts';
import { db } from '#lib/db/service.ts';
import { AppError } from '#lib/core/errors.ts';
import { acceptInvite } from '#lib/teams/invites/my-invites.ts';
import type { LocalBackground } from '#infra/local-background.ts';
import { pausedBeforeFirstWrite } from '../helpers/paused.ts';
import { bulkWriter } from '#bench/bulk-write.ts';
import { inviteItems, storedUser } from '#bench/items.ts';
import { type Reply, type TestUser, addMember, createTeam, freshEmail, freshSlug, signUp, useApi } from '../helpers/api.ts';
import { race, sweep } from '../helpers/race.ts';

const api = useApi();

/** Rounds per owner race: CI tier of the plan is 20; 10 keeps this file well under a minute on 2 cores. */
const ROUNDS = 10;
/**
 * H6's window (accept read the invite, re-invite commits, accept commits) is a few database round
 * trips wide, and where it falls depends on load, so its rounds sweep the accept's delay finely.
 */
const H6_ROUNDS = 12;

// ---------------------------------------------------------------------------------------------
// Racing and counting

const errorCode = (r: Reply): string | undefined => (typeof r.body === 'object' && r.body !== null ? r.body.error?.code : undefined);

/** "409 slug_taken", "201": what a reply is, for counting and for messages. */
const outcome = (r: Reply): string => [r.status, errorCode(r)].filter((part) => part !== undefined).join(' ');

/** Status counts of one scenario over all its rounds; printed as annotations for the report. */
class Tally {
  readonly counts = new Map<string, number>();
  add(replies: Reply[]): void {
    for (const r of replies) this.addKey(outcome(r));
  }
  addKey(key: string): void {
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }
  total(): number {
    return [...this.counts.values()].reduce((a, b) => a + b, 0);
  }
  toString(): string {
    return [...this.counts.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, n]) => `${k}: ${n}`)
      .join(', ');
  }
}

const count = (replies: Reply[], status: number, code?: string): number =>
  replies.filter((r) => r.status === status && (code === undefined || errorCode(r) === code)).length;

const expectNo5xx = (replies: Reply[]): void => {
  expect(replies.filter((r) => r.status >= 500).map(outcome)).toEqual([]);
};

// ---------------------------------------------------------------------------------------------
// Invariant checker: the only place a Scan is allowed (test-only, reads only).

type Item = Record<string, unknown>;

const documents = createDocumentClient();

const scanTable = async (): Promise<Item[]> => {
  const items: Item[] = [];
  let ExclusiveStartKey: Record<string, unknown> | undefined;
  do {
    const page = await documents.send(new ScanCommand({ TableName: config.tableName, ConsistentRead: true, ExclusiveStartKey }));
    items.push(...((page.Items ?? []) as Item[]));
    ExclusiveStartKey = page.LastEvaluatedKey;
  } while (ExclusiveStartKey);
  return items;
};

/** Attributes every stored item of an entity must carry: a partial item (I6) lacks some. */
const REQUIRED: Record<string, readonly string[]> = {
  team: ['teamId', 'name', 'slug', 'ownerCount', 'createdAt', 'updatedAt'],
  teamCleanup: ['teamId', 'slug', 'deletedAt'],
  slugClaim: ['slug', 'teamId'],
  membership: ['teamId', 'userUuid', 'memberId', 'userId', 'role', 'createdAt', 'updatedAt'],
  invite: ['inviteUuid', 'inviteId', 'teamId', 'email', 'role', 'status', 'invitedByUuid', 'expiresAt', 'createdAt', 'updatedAt'],
  pendingInvite: ['teamId', 'email', 'inviteUuid'],
  user: ['userUuid', 'userId', 'email', 'firstName', 'lastName', 'passwordHash', 'createdAt', 'updatedAt'],
  emailClaim: ['email', 'userUuid'],
};

const ROLES = new Set(['OWNER', 'ADMIN', 'MEMBER']);

/** Scans until no team cleanup job is left (the stream's cleanup has drained), at most `ms`. */
const drainedTable = async (ms = 60_000): Promise<Item[]> => {
  for (const end = Date.now() + ms; ; await sleep(100)) {
    const items = await scanTable();
    if (!items.some((i) => i.__edb_e__ === 'teamCleanup') || Date.now() > end) return items;
  }
};

/**
 * I1 ownerCount matches the OWNER memberships, and every team keeps an OWNER;
 * I2 one membership per (team, user), whose team and user exist, with unique member ids;
 * I3 slug and e-mail claims map one-to-one onto teams and users;
 * I4 no PENDING (or swept EXPIRED) invite for a member, and pending-invite claims match those invites one-to-one;
 * I5 once the cleanup has drained: no cleanup job left, and no membership, pending-invite claim or
 *    invite of a team that no longer exists;
 * I6 no item lacks a required attribute. Returns every violation found, as sentences.
 */
const invariantViolations = async (): Promise<string[]> => {
  const byEntity = new Map<string, Item[]>();
  for (const item of await drainedTable()) {
    const entity = String(item.__edb_e__);
    byEntity.set(entity, [...(byEntity.get(entity) ?? []), item]);
  }
  const of = (entity: string): Item[] => byEntity.get(entity) ?? [];
  const problems: string[] = [];

  for (const [entity, attributes] of Object.entries(REQUIRED)) {
    for (const item of of(entity)) {
      const missing = attributes.filter((a) => item[a] === undefined || item[a] === null);
      if (missing.length) problems.push(`I6: ${entity} ${String(item.pk)}/${String(item.sk)} lacks ${missing.join(', ')}`);
    }
  }

  const teams = of('team');
  const users = of('user');
  const memberships = of('membership');
  const teamIds = new Set(teams.map((t) => t.teamId));
  const userUuids = new Set(users.map((u) => u.userUuid));

  for (const t of teams) {
    const mine = memberships.filter((m) => m.teamId === t.teamId);
    const owners = mine.filter((m) => m.role === 'OWNER').length;
    if (owners < 1) problems.push(`I1: team ${String(t.slug)} has no OWNER`);
    if (t.ownerCount !== owners)
      problems.push(`I1: team ${String(t.slug)} ownerCount ${String(t.ownerCount)} but ${owners} OWNER memberships`);
  }

  const pairs = new Set<string>();
  const memberIds = new Set<unknown>();
  for (const m of memberships) {
    const pair = `${String(m.teamId)}/${String(m.userUuid)}`;
    if (pairs.has(pair)) problems.push(`I2: two memberships for ${pair}`);
    pairs.add(pair);
    if (memberIds.has(m.memberId)) problems.push(`I2: member id ${String(m.memberId)} used twice`);
    memberIds.add(m.memberId);
    if (!teamIds.has(m.teamId)) problems.push(`I2: membership ${pair} of a team that does not exist`);
    if (!userUuids.has(m.userUuid)) problems.push(`I2: membership ${pair} of a user that does not exist`);
    if (!ROLES.has(String(m.role))) problems.push(`I2: membership ${pair} has role ${String(m.role)}`);
  }

  const claimsOneToOne = (label: string, claims: Item[], owners: Item[], key: string, claimRef: string, ownerRef: string): void => {
    for (const o of owners) {
      const found = claims.filter((c) => c[key] === o[key]);
      if (found.length !== 1 || found[0]?.[claimRef] !== o[ownerRef]) {
        problems.push(
          `I3: ${label} ${String(o[key])} has ${found.length} claim(s) pointing at ${found.map((c) => String(c[claimRef])).join(', ')}`,
        );
      }
    }
    for (const c of claims) {
      const target = owners.filter((o) => o[ownerRef] === c[claimRef]);
      if (target.length !== 1 || target[0]?.[key] !== c[key]) {
        problems.push(`I3: ${label} claim ${String(c[key])} is dangling (points at ${String(c[claimRef])})`);
      }
    }
  };
  claimsOneToOne('slug', of('slugClaim'), teams, 'slug', 'teamId', 'teamId');
  claimsOneToOne('e-mail', of('emailClaim'), users, 'email', 'userUuid', 'userUuid');

  const uuidByEmail = new Map(users.map((u) => [u.email, u.userUuid]));
  const invites = of('invite');
  // An invite the sweeper marked EXPIRED is still pending (its claim stays; a re-invite revives it).
  const pending = invites.filter((i) => i.status === 'PENDING' || i.status === 'EXPIRED');
  const claims = of('pendingInvite');
  for (const i of pending) {
    const invitee = uuidByEmail.get(i.email);
    if (invitee !== undefined && pairs.has(`${String(i.teamId)}/${String(invitee)}`)) {
      problems.push(`I4: ${String(i.email)} is a member of team ${String(i.teamId)} and still has PENDING invite ${String(i.inviteUuid)}`);
    }
    if (!claims.some((c) => c.inviteUuid === i.inviteUuid && c.teamId === i.teamId && c.email === i.email)) {
      problems.push(`I4: PENDING invite ${String(i.inviteUuid)} has no pending-invite claim`);
    }
  }
  for (const c of claims) {
    if (!pending.some((i) => i.inviteUuid === c.inviteUuid && i.teamId === c.teamId && i.email === c.email)) {
      problems.push(`I4: pending-invite claim ${String(c.teamId)}/${String(c.email)} points at no PENDING invite`);
    }
  }

  for (const job of of('teamCleanup')) problems.push(`I5: the cleanup of team ${String(job.teamId)} has not drained`);
  for (const c of claims.filter((c) => !teamIds.has(c.teamId)))
    problems.push(`I5: pending-invite claim ${String(c.teamId)}/${String(c.email)} of a deleted team`);
  for (const i of invites.filter((i) => !teamIds.has(i.teamId)))
    problems.push(`I5: ${String(i.status)} invite ${String(i.inviteUuid)} of a deleted team`);
  return problems;
};

const expectInvariants = async (): Promise<void> => {
  expect(await invariantViolations()).toEqual([]);
};

// ---------------------------------------------------------------------------------------------
// Fixtures

interface Member {
  id: number;
  role: string;
}

/** The team's members by e-mail, as the API lists them. */
const membersOf = async (slug: string, as: TestUser): Promise<Map<string, Member>> => {
  const res = await api.call('GET', `/api/teams/${slug}/members?limit=1000`, { token: as.token });
  expect(res.status).toBe(200);
  return new Map((res.body.data as { email: string; id: number; role: string }[]).map((m) => [m.email, { id: m.id, role: m.role }]));
};

/** A team owned by both `p` and `q`, with both membership ids. */
const twoOwnerTeam = async (p: TestUser, q: TestUser): Promise<{ slug: string; teamId: number; pId: number; qId: number }> => {
  const team = await createTeam(api, p);
  const qId = await addMember(api, team.slug, p, q, 'OWNER');
  const pId = (await membersOf(team.slug, p)).get(p.email)?.id;
  expect(pId).toBeTypeOf('number');
  return { slug: team.slug, teamId: team.id, pId: pId as number, qId };
};

/** `user`'s pending invite to team `slug`, from their own invite list. */
const inviteUuidFor = async (user: TestUser, slug: string): Promise<string> => {
  const mine = await api.call('GET', '/api/invites?limit=1000', { token: user.token });
  expect(mine.status).toBe(200);
  const found = (mine.body.data as { uuid: string; team: { slug: string } }[]).find((i) => i.team.slug === slug);
  expect(found).toBeDefined();
  return (found as { uuid: string }).uuid;
};

const storedMembership = async (teamId: number, userUuid: string) =>
  (await db().entities.membership.get({ teamId, userUuid }).go({ consistent: true })).data;

const role = (token: string, slug: string, memberId: number, to: string) => () =>
  api.call('PUT', `/api/teams/${slug}/members/${memberId}`, { token, json: { role: to } });
const remove = (token: string, slug: string, memberId: number) => () =>
  api.call('DELETE', `/api/teams/${slug}/members/${memberId}`, { token });

// ---------------------------------------------------------------------------------------------

describe('concurrency races (H) with invariants I1–I6 after each', () => {
  let p: TestUser;
  let q: TestUser;
  let m: TestUser;
  let e: TestUser;

  let cleanup: LocalBackground;

  beforeAll(async () => {
    [p, q, m, e] = await Promise.all([signUp(api, 'p'), signUp(api, 'q'), signUp(api, 'm'), signUp(api, 'e')]);
    // The team cleanup (and the other background work), from the table's stream as in local mode.
    const { startLocalBackground } = await import('#infra/local-background.ts');
    cleanup = await startLocalBackground();
  });

  afterAll(async () => {
    await cleanup.stop();
    documents.destroy();
  });

  it('H1: 24 concurrent creates of one slug give one 201 and 23 slug_taken, one team, one claim', async ({ annotate }) => {
    const tally = new Tally();
    const creators = [p, q, m, e];
    for (let round = 0; round < 3; round++) {
      const slug = freshSlug('h1');
      const replies = await race(
        api,
        Array.from(
          { length: 24 },
          (_, i) => () =>
            api.call('POST', '/api/teams', { token: (creators[i % creators.length] as TestUser).token, json: { name: `H1 ${i}`, slug } }),
        ),
      );
      tally.add(replies);
      expectNo5xx(replies);
      expect(count(replies, 201)).toBe(1);
      expect(count(replies, 409, 'slug_taken')).toBe(23);

      // The 201 is backed by exactly one stored team, its slug claim and its owner's membership.
      const winner = replies.find((r) => r.status === 201) as Reply;
      const items = await scanTable();
      const teams = items.filter((i) => i.__edb_e__ === 'team' && i.slug === slug);
      const claims = items.filter((i) => i.__edb_e__ === 'slugClaim' && i.slug === slug);
      expect(teams.map((t) => t.teamId)).toEqual([winner.body.data.id]);
      expect(claims.map((c) => c.teamId)).toEqual([winner.body.data.id]);
      expect(items.filter((i) => i.__edb_e__ === 'membership' && i.teamId === winner.body.data.id)).toHaveLength(1);
      await expectInvariants();
    }
    expect(tally.total()).toBe(3 * 24);
    await annotate(`H1 x3 rounds: ${tally}`);
  });

  it('H1 variants: a rename to s against a create of s, and a rename away from a against a create of a', async ({ annotate }) => {
    const toNew = new Tally();
    const toOld = new Tally();
    for (let round = 0; round < ROUNDS; round++) {
      // Rename A to s while another user creates s: exactly one of them gets s.
      const a = await createTeam(api, p);
      const s = freshSlug('h1s');
      const [renamed, created] = (await race(
        api,
        [
          () => api.call('PUT', `/api/teams/${a.slug}`, { token: p.token, json: { name: 'Renamed', slug: s } }),
          () => api.call('POST', '/api/teams', { token: q.token, json: { name: 'Created', slug: s } }),
        ],
        sweep(round, 2),
      )) as [Reply, Reply];
      toNew.add([renamed, created]);
      expectNo5xx([renamed, created]);
      // Exactly one of the two gets s.
      expect(['200/409', '409/201']).toContain(`${renamed.status}/${created.status}`);
      const loser = renamed.status === 200 ? created : renamed;
      expect(errorCode(loser)).toBe('slug_taken');
      const owner = renamed.status === 200 ? p : q;
      const atS = await api.call('GET', `/api/teams/${s}`, { token: owner.token });
      expect(atS.status).toBe(200);
      expect(atS.body.data.id).toBe(renamed.status === 200 ? a.id : created.body.data.id);
      // A's old slug leads to A exactly when the rename lost.
      expect((await api.call('GET', `/api/teams/${a.slug}`, { token: p.token })).status).toBe(renamed.status === 200 ? 404 : 200);

      // Rename B away from b while another user creates b: the rename always wins its fresh slug;
      // the create gets b only if it lands after the rename freed it.
      const b = await createTeam(api, p);
      const away = freshSlug('h1a');
      const [moved, reused] = (await race(
        api,
        [
          () => api.call('PUT', `/api/teams/${b.slug}`, { token: p.token, json: { name: 'Moved', slug: away } }),
          () => api.call('POST', '/api/teams', { token: q.token, json: { name: 'Reuses old slug', slug: b.slug } }),
        ],
        sweep(round, 2),
      )) as [Reply, Reply];
      toOld.add([moved, reused]);
      expectNo5xx([moved, reused]);
      expect(moved.status).toBe(200);
      expect([201, 409]).toContain(reused.status);
      if (reused.status === 409) expect(errorCode(reused)).toBe('slug_taken');
      await expectInvariants();
    }
    expect([toNew.total(), toOld.total()]).toEqual([ROUNDS * 2, ROUNDS * 2]);
    await annotate(`rename to s vs create s x${ROUNDS}: ${toNew}`);
    await annotate(`rename away from a vs create a x${ROUNDS}: ${toOld}`);
  });

  it('H8: 20 concurrent sign-ups with one e-mail in different case and spacing give one 201 and 19 email_taken', async ({ annotate }) => {
    const tally = new Tally();
    for (let round = 0; round < 2; round++) {
      const base = freshEmail('h8');
      const [local, domain] = base.split('@') as [string, string];
      const spellings = Array.from({ length: 20 }, (_, i) => {
        const cased = i % 2 ? `${local.toUpperCase()}@${domain}` : `${local}@${domain.toUpperCase()}`;
        return [cased, ` ${cased}`, `${cased}\t`, `\n ${cased} `][i % 4] as string;
      });
      const replies = await race(
        api,
        spellings.map(
          (email) => () =>
            api.call('POST', '/api/auth/signup', {
              json: { email, password: 'correct horse battery staple', firstName: 'H', lastName: 'Eight' },
            }),
        ),
      );
      tally.add(replies);
      expectNo5xx(replies);
      expect(count(replies, 201)).toBe(1);
      expect(count(replies, 409, 'email_taken')).toBe(19);
      const winner = replies.find((r) => r.status === 201) as Reply;
      expect(winner.body.data.session.user.email).toBe(base);

      const items = await scanTable();
      const stored = items.filter((i) => i.__edb_e__ === 'user' && String(i.email).toLowerCase() === base);
      expect(stored.map((u) => [u.email, u.userUuid])).toEqual([[base, winner.body.data.session.user.id]]);
      expect(items.filter((i) => i.__edb_e__ === 'emailClaim' && i.email === base)).toHaveLength(1);
      await expectInvariants();
    }
    expect(tally.total()).toBe(2 * 20);
    await annotate(`H8 x2 rounds: ${tally}`);
  });

  /** `count` users, each with a pending MEMBER invite to `teamId` written as createInvite writes it; returns [user, invite uuid] pairs. */
  const invitees = async (teamId: number, count: number, name: string): Promise<[TestUser, string][]> => {
    const users: TestUser[] = [];
    for (let i = 0; i < count; i += 10)
      users.push(...(await Promise.all(Array.from({ length: Math.min(10, count - i) }, () => signUp(api, name)))));
    const inviter = await storedUser(p.uuid);
    const writer = bulkWriter(process.env.DYNAMODB_ENDPOINT as string, config.tableName);
    try {
      const invites = users.map((u) => inviteItems(teamId, u.email, inviter, new Date()));
      await writer.write(invites.flatMap((i) => i.items));
      return users.map((u, i) => [u, (invites[i] as { inviteUuid: string }).inviteUuid]);
    } finally {
      writer.close();
    }
  };

  it(
    'H10: 300 concurrent accepts of 300 invites to one team all succeed: no hot team item, no 409 or 503',
    // Most of it is the setup: 300 sign-ups (each hashes a password) and their confirmations, on
    // two cores and an emulator that every file before has filled (alone: about 95 s).
    { timeout: 420_000 },
    async ({ annotate }) => {
      const team = await createTeam(api, p);
      const pairs = await invitees(team.id, 300, 'h10');
      const started = Date.now();
      const replies = await race(
        api,
        pairs.map(
          ([u, uuid]) =>
            () =>
              api.call('POST', `/api/invites/${uuid}/accept`, { token: u.token }),
        ),
      );
      const ms = Date.now() - started;
      const tally = new Tally();
      tally.add(replies);
      const refused = replies
        .filter((r) => r.status !== 200)
        .slice(0, 5)
        .map((r) => JSON.stringify(r.body));
      expect(tally.toString(), refused.join('\n')).toBe('200: 300');
      const stored = await db().entities.membership.query.primary({ teamId: team.id }).go({ consistent: true, pages: 'all' });
      expect(stored.data).toHaveLength(301);
      await expectInvariants();
      await annotate(`H10 300 accepts into one team: ${tally} in ${ms} ms`);
    },
  );

  it(
    'H9: a team deleted while its invitees accept: each accept 200 or 404, and once cleanup drains nothing of the team is left',
    { timeout: 180_000 },
    async ({ annotate }) => {
      const tally = new Tally();
      for (let round = 0; round < 3; round++) {
        const team = await createTeam(api, p);
        const pairs = await invitees(team.id, 20, 'h9');
        const hops = [...pairs.map((_, i) => i % 6), 2 * round];
        const replies = await race(
          api,
          [
            ...pairs.map(
              ([u, uuid]) =>
                () =>
                  api.call('POST', `/api/invites/${uuid}/accept`, { token: u.token }),
            ),
            () => api.call('DELETE', `/api/teams/${team.slug}`, { token: p.token }),
          ],
          hops,
        );
        tally.add(replies);
        expectNo5xx(replies);
        expect(outcome(replies.at(-1) as Reply)).toBe('200');
        for (const r of replies.slice(0, -1)) expect(['200', '404 not_found']).toContain(outcome(r));
        // Whatever the accepts did, the invites now answer 404, and I2/I5 hold once the cleanup is done.
        const [u, uuid] = pairs[0] as [TestUser, string];
        expect(outcome(await api.call('POST', `/api/invites/${uuid}/accept`, { token: u.token }))).toBe('404 not_found');
        await expectInvariants();
      }
      await annotate(`H9 x3 rounds (20 accepts + 1 delete): ${tally}`);
    },
  );

  it('H2: 16 concurrent accepts of one invite give one 200, the rest 409, and one membership', async ({ annotate }) => {
    const tally = new Tally();
    for (let round = 0; round < 3; round++) {
      const team = await createTeam(api, p);
      const invited = await api.call('POST', `/api/teams/${team.slug}/invites`, {
        token: p.token,
        json: { email: e.email, role: 'ADMIN' },
      });
      expect(invited.status).toBe(201);
      const uuid = await inviteUuidFor(e, team.slug);

      const replies = await race(
        api,
        Array.from({ length: 16 }, () => () => api.call('POST', `/api/invites/${uuid}/accept`, { token: e.token })),
      );
      tally.add(replies);
      expectNo5xx(replies);
      expect(count(replies, 200)).toBe(1);
      expect(count(replies, 409, 'invite_not_pending') + count(replies, 409, 'already_member')).toBe(15);

      const members = await membersOf(team.slug, p);
      expect([...members.keys()].sort()).toEqual([e.email, p.email].sort());
      expect(members.get(e.email)?.role).toBe('ADMIN');
      const invite = (await db().entities.invite.get({ inviteUuid: uuid }).go({ consistent: true })).data;
      expect(invite?.status).toBe('ACCEPTED');
      await expectInvariants();
    }
    expect(tally.total()).toBe(3 * 16);
    await annotate(`H2 x3 rounds: ${tally}`);
  });

  /**
   * H4: two OWNERs P and Q act against each other at once. Whatever interleaving DynamoDB picks,
   * one of the pair succeeds, the other is refused with 409 (last_owner, or conflict when its own
   * role changed under it), 403 (it read its demoted role) or 404 (it was removed first), and I1 holds.
   */
  const lastOwnerRace = (name: string, build: (t: { slug: string; pId: number; qId: number }) => (() => Promise<Reply>)[]) =>
    it(`H4: ${name}: one succeeds, at least one OWNER remains, ownerCount stays exact`, async ({ annotate }) => {
      const tally = new Tally();
      for (let round = 0; round < ROUNDS; round++) {
        const t = await twoOwnerTeam(p, q);
        const replies = await race(api, build(t), sweep(round));
        tally.add(replies);
        expectNo5xx(replies);
        for (const r of replies) {
          expect(['200', '403 forbidden', '404 not_found', '409 last_owner', '409 conflict']).toContain(outcome(r));
        }
        expect(count(replies, 200), replies.map(outcome).join(', ')).toBe(1);

        const stored = await Promise.all([p, q].map((u) => storedMembership(t.teamId, u.uuid)));
        expect(stored.filter((s) => s?.role === 'OWNER').length).toBeGreaterThanOrEqual(1);
        await expectInvariants();
      }
      expect(tally.total()).toBe(ROUNDS * 2);
      await annotate(`${name} x${ROUNDS}: ${tally}`);
    });

  lastOwnerRace('P demotes Q while Q demotes P', (t) => [role(p.token, t.slug, t.qId, 'MEMBER'), role(q.token, t.slug, t.pId, 'MEMBER')]);
  lastOwnerRace('P removes Q while Q removes P', (t) => [remove(p.token, t.slug, t.qId), remove(q.token, t.slug, t.pId)]);
  lastOwnerRace('P and Q both leave', (t) => [remove(p.token, t.slug, t.pId), remove(q.token, t.slug, t.qId)]);
  lastOwnerRace('P demotes itself while Q leaves', (t) => [role(p.token, t.slug, t.pId, 'ADMIN'), remove(q.token, t.slug, t.qId)]);

  it('H5: role edits racing a removal of the same member end in one requested state, never a partial item', async ({ annotate }) => {
    const tally = new Tally();
    const finals = new Tally();
    for (let round = 0; round < ROUNDS; round++) {
      const team = await createTeam(api, p);
      const memberId = await addMember(api, team.slug, p, m, 'MEMBER');
      const edits = ['ADMIN', 'OWNER', 'MEMBER'];
      // Each round holds back a different one of the four requests, by a growing number of hops.
      const hops = [0, 0, 0, 0];
      hops[round % 4] = 2 * Math.floor(round / 4);
      const replies = await race(
        api,
        [...edits.map((to) => role(p.token, team.slug, memberId, to)), remove(p.token, team.slug, memberId)],
        hops,
      );
      tally.add(replies);
      expectNo5xx(replies);
      for (const r of replies) expect(['200', '404 not_found', '409 conflict']).toContain(outcome(r));
      const removed = (replies[3] as Reply).status === 200;
      const granted = edits.filter((_, i) => (replies[i] as Reply).status === 200);

      const stored = await storedMembership(team.id, m.uuid);
      if (removed) {
        expect(stored).toBeNull();
      } else {
        // Still there, whole, with a role one of the successful edits asked for (or the one it had).
        expect(stored).toMatchObject({
          memberId,
          userId: expect.any(Number),
          createdAt: expect.any(String),
          updatedAt: expect.any(String),
        });
        expect([...granted, 'MEMBER']).toContain(stored?.role);
      }
      finals.addKey(removed ? 'removed' : String(stored?.role));
      await expectInvariants();
    }
    expect(tally.total()).toBe(ROUNDS * 4);
    await annotate(`H5 x${ROUNDS}: ${tally}`);
    await annotate(`H5 final states: ${finals}`);
  });

  it('H6: a re-invite racing the accept of the same invite gives only linearizable outcomes', async ({ annotate }) => {
    const tally = new Tally();
    const wrongRole: string[] = [];
    for (let round = 0; round < H6_ROUNDS; round++) {
      const team = await createTeam(api, p);
      const invited = await api.call('POST', `/api/teams/${team.slug}/invites`, {
        token: p.token,
        json: { email: e.email, role: 'MEMBER' },
      });
      expect(invited.status).toBe(201);
      const uuid = await inviteUuidFor(e, team.slug);

      // The accept's path to its write is shorter than the re-invite's, so the accept is held
      // back by a growing number of hops until the re-invite wins.
      const [reinvite, accept] = (await race(
        api,
        [
          () => api.call('POST', `/api/teams/${team.slug}/invites`, { token: p.token, json: { email: e.email, role: 'ADMIN' } }),
          () => api.call('POST', `/api/invites/${uuid}/accept`, { token: e.token }),
        ],
        [0, round],
      )) as [Reply, Reply];
      tally.add([reinvite, accept]);
      expectNo5xx([reinvite, accept]);
      expect(outcome(accept)).toBe('200');
      expect(['201', '409 already_member']).toContain(outcome(reinvite));

      // After an accept a re-invite can only get already_member; so a 201 means the re-invite
      // came first and the accept must have made an ADMIN. Otherwise the member is a MEMBER.
      const stored = await storedMembership(team.id, e.uuid);
      const want = reinvite.status === 201 ? 'ADMIN' : 'MEMBER';
      if (stored?.role !== want) {
        const invite = (await db().entities.invite.get({ inviteUuid: uuid }).go({ consistent: true })).data;
        wrongRole.push(
          `round ${round}: re-invite ${outcome(reinvite)}, accept ${outcome(accept)}, membership ${String(stored?.role)}, invite ${String(invite?.status)} ${String(invite?.role)}`,
        );
      }
      // No member is left with a PENDING invite (I4), whichever way it went.
      await expectInvariants();
    }
    expect(tally.total()).toBe(H6_ROUNDS * 2);
    await annotate(`H6 x${H6_ROUNDS}: ${tally}; membership role not the linearizable one in ${wrongRole.length} round(s)`);
    expect(wrongRole).toEqual([]);
  });

  it("H6 pinned: a re-invite that commits between the accept's read and its write is not lost", async () => {
    const team = await createTeam(api, p);
    const invited = await api.call('POST', `/api/teams/${team.slug}/invites`, { token: p.token, json: { email: e.email, role: 'MEMBER' } });
    expect(invited.status).toBe(201);
    const uuid = await inviteUuidFor(e, team.slug);

    // The accept use case itself, on a Db that runs the whole re-invite (through the server)
    // after the accept has read the invite and before it writes: the window H6 hits by luck.
    let reinvite: Reply | undefined;
    const paused = pausedBeforeFirstWrite(async () => {
      reinvite = await api.call('POST', `/api/teams/${team.slug}/invites`, { token: p.token, json: { email: e.email, role: 'ADMIN' } });
    });
    const accepted = await acceptInvite(paused, (await claimsOf(e.token)).claims, uuid, new Date()).then(
      () => null,
      (error: unknown) => error,
    );
    expect(reinvite && outcome(reinvite)).toBe('201');

    const stored = await storedMembership(team.id, e.uuid);
    if (accepted === null) {
      // The re-invite answered 201 first, so the accept that followed must grant its role.
      expect(stored?.role, 'accept granted the role it read before the re-invite, not the one the invite now holds').toBe('ADMIN');
    } else {
      // Refusing the stale accept is linearizable too, as long as nothing was written.
      expect(accepted).toBeInstanceOf(AppError);
      expect(['conflict', 'invite_not_pending']).toContain((accepted as AppError).code);
      expect(stored).toBeNull();
    }
    await expectInvariants();
  });
});
