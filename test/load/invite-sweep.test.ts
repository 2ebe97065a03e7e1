import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { db } from '#lib/db/service.ts';
import { newId } from '#lib/core/ids.ts';
import { sweepExpiredInvites } from '#lib/teams/invites/sweep.ts';
import { type Reply, type TestUser, createTeam, freshEmail, signUp, useApi } from '../helpers/api.ts';
import { expireInvite } from '../helpers/invites.ts';

/**
 * Invite lists against a history of expired invites: a page's Query must read the same number of
 * items with 2,000 expired rows in its partition as with none, once the sweeper has run. Items
 * DynamoDB evaluated are its own ScannedCount, summed over the Query requests one API call makes,
 * counted by an SDK middleware on the handlers' client (the local server runs them in this process).
 */
const api = useApi();
const MIN = 60_000;
const DAY = 86_400_000;
const HISTORY = 2_000;

interface Queried {
  requests: number;
  scanned: number;
  returned: number;
}
let queried: Queried | null = null;

beforeAll(() => {
  db().documents.middlewareStack.add(
    (next, context) => async (args) => {
      const result = await next(args);
      if (queried && context.commandName === 'QueryCommand') {
        const output = result.output as { ScannedCount?: number; Count?: number };
        queried.requests++;
        queried.scanned += output.ScannedCount ?? 0;
        queried.returned += output.Count ?? 0;
      }
      return result;
    },
    { step: 'initialize', name: 'countQueries' },
  );
});
afterAll(() => db().documents.middlewareStack.remove('countQueries'));

/** The reply to one API call and what its Queries read. */
const measured = async (call: () => Promise<Reply>): Promise<{ reply: Reply; queried: Queried }> => {
  queried = { requests: 0, scanned: 0, returned: 0 };
  try {
    return { reply: await call(), queried };
  } finally {
    queried = null;
  }
};

/** Every page of a list, following `Link: <…>; rel="next"`: the ids in order, and the pages' sizes. */
const allPages = async (first: string, token: string): Promise<{ ids: number[]; pages: number[] }> => {
  const ids: number[] = [];
  const pages: number[] = [];
  for (let path: string | null = first; path;) {
    const res = await api.call('GET', path, { token });
    expect(res.status).toBe(200);
    ids.push(...res.body.data.map((i: { id: number }) => i.id));
    pages.push(res.body.data.length);
    const next = /<([^>]+)>; rel="next"/.exec(res.headers.get('link') ?? '')?.[1];
    path = next ? new URL(next, api.url).pathname + new URL(next, api.url).search : null;
  }
  return { ids, pages };
};

/**
 * Writes `count` PENDING invites that expired within the last 50 minutes, as createInvite would
 * have written them 7 days earlier (with gsi3's bucket), in batches. Half have ids older than
 * anything live, half newer, so that live rows sit in the middle of the history in key order.
 */
const seedExpired = async (count: number, of: (n: number) => { teamId: number; email: string }, invitedByUuid: string) => {
  const now = Date.now();
  const items = Array.from({ length: count }, (_, n) => {
    const expiresAt = new Date(now - MIN - (n % 49) * MIN).toISOString();
    const createdAt = new Date(Date.parse(expiresAt) - 7 * DAY).toISOString();
    return {
      inviteUuid: randomUUID(),
      inviteId: newId(new Date(n % 2 === 0 ? Date.parse(createdAt) : now + DAY + n)),
      ...of(n),
      role: 'MEMBER' as const,
      status: 'PENDING' as const,
      invitedByUuid,
      expiresAt,
      createdAt,
      updatedAt: createdAt,
    };
  });
  for (let i = 0; i < items.length; i += 500) {
    const { unprocessed } = await db()
      .entities.invite.put(items.slice(i, i + 500))
      .go({ concurrency: 4 });
    expect(unprocessed).toEqual([]);
  }
};

const sweepAll = () => sweepExpiredInvites(db(), new Date(), () => true);

describe('invite lists read only pending, unexpired rows', () => {
  let owner: TestUser;
  let guest: TestUser;
  let slug: string;
  let teamId: number;

  beforeAll(async () => {
    [owner, guest] = [await signUp(api, 'owner'), await signUp(api, 'guest')];
    ({ slug, id: teamId } = await createTeam(api, owner));
  });

  it(`with ${HISTORY} expired invites of one team and ${HISTORY} of one e-mail, a page reads only the live rows once swept; order and paging as before`, async ({
    annotate,
  }) => {
    // Live invites: five of the team, three of the guest's e-mail (from three other teams).
    for (let n = 0; n < 5; n++) {
      expect(
        (await api.call('POST', `/api/teams/${slug}/invites`, { token: owner.token, json: { email: freshEmail(), role: 'MEMBER' } }))
          .status,
      ).toBe(201);
    }
    const others: { slug: string; id: number }[] = [];
    for (let n = 0; n < 3; n++) {
      const other = await createTeam(api, owner);
      others.push(other);
      expect(
        (await api.call('POST', `/api/teams/${other.slug}/invites`, { token: owner.token, json: { email: guest.email, role: 'ADMIN' } }))
          .status,
      ).toBe(201);
    }
    const teamList = () => api.call('GET', `/api/teams/${slug}/invites?limit=2`, { token: owner.token });
    const myList = () => api.call('GET', '/api/invites?limit=2', { token: guest.token });
    const liveTeam = await allPages(`/api/teams/${slug}/invites?limit=2`, owner.token);
    const liveMine = await allPages('/api/invites?limit=2', guest.token);
    expect(liveTeam.ids).toHaveLength(5);
    expect(liveMine.ids).toHaveLength(3);
    const none = { team: (await measured(teamList)).queried, mine: (await measured(myList)).queried };

    await seedExpired(HISTORY, (n) => ({ teamId, email: `gone-${n}@example.com` }), owner.uuid);
    await seedExpired(HISTORY, (n) => ({ teamId: (others[n % 3] as { id: number }).id, email: guest.email }), owner.uuid);

    // Before the sweep: right answers (the filter), but the Queries wade through the history.
    const before = { team: await measured(teamList), mine: await measured(myList) };
    expect(before.team.reply.body.data.map((i: { id: number }) => i.id)).toEqual(liveTeam.ids.slice(0, 2));
    expect(before.mine.reply.body.data.map((i: { id: number }) => i.id)).toEqual(liveMine.ids.slice(0, 2));
    expect(before.team.queried.scanned).toBeGreaterThan(HISTORY / 2);
    expect(before.mine.queried.scanned).toBeGreaterThan(HISTORY / 2);

    const swept = await sweepAll();
    expect(swept).toMatchObject({ expired: 2 * HISTORY, skipped: 0, caughtUp: true });

    // After: the same pages, reading what they read with no history at all.
    const after = { team: await measured(teamList), mine: await measured(myList) };
    expect(after.team.reply.body.data.map((i: { id: number }) => i.id)).toEqual(liveTeam.ids.slice(0, 2));
    expect(after.mine.reply.body.data.map((i: { id: number }) => i.id)).toEqual(liveMine.ids.slice(0, 2));
    expect(after.team.queried).toEqual(none.team);
    expect(after.mine.queried).toEqual(none.mine);
    // One Query, reading the page and the one row that says there is a next page.
    expect(after.team.queried).toEqual({ requests: 1, scanned: 3, returned: 3 });
    expect(await allPages(`/api/teams/${slug}/invites?limit=2`, owner.token)).toEqual(liveTeam);
    expect(await allPages('/api/invites?limit=2', guest.token)).toEqual(liveMine);
    // Default page size too: the whole list, in one Query that reads the live rows alone.
    const full = await measured(() => api.call('GET', `/api/teams/${slug}/invites`, { token: owner.token }));
    expect(full.reply.body.data.map((i: { id: number }) => i.id)).toEqual(liveTeam.ids);
    expect(full.queried).toEqual({ requests: 1, scanned: 5, returned: 5 });

    await annotate(
      `items evaluated per page (limit 2) with ${HISTORY} expired rows: team list ${before.team.queried.scanned} in ${before.team.queried.requests} Query request(s) before the sweep, ` +
        `${after.team.queried.scanned} in ${after.team.queried.requests} after (${none.team.scanned} with no history); ` +
        `my invites ${before.mine.queried.scanned} in ${before.mine.queried.requests} before, ${after.mine.queried.scanned} in ${after.mine.queried.requests} after (${none.mine.scanned} with none); ` +
        `sweep: ${swept.expired} expired with ${swept.queries} gsi3 Queries`,
    );
    // Alone it takes about 35 s; after the other load tests, on the same emulator, it once took over 240 s.
  }, 600_000);

  it('a swept invite still answers 410 to its addressee, 404 to the team, and comes back on re-invite or resend', async () => {
    const [a, b] = [await signUp(api), await signUp(api)];
    for (const user of [a, b]) {
      expect(
        (await api.call('POST', `/api/teams/${slug}/invites`, { token: owner.token, json: { email: user.email, role: 'ADMIN' } })).status,
      ).toBe(201);
    }
    const mine = async (user: TestUser) =>
      (await api.call('GET', '/api/invites', { token: user.token })).body.data.find(
        (i: { team: { slug: string } }) => i.team.slug === slug,
      );
    const [ia, ib] = [await mine(a), await mine(b)];
    await expireInvite(ia.uuid);
    await expireInvite(ib.uuid);
    const swept = await sweepAll();
    expect(swept.expired).toBeGreaterThanOrEqual(2);
    for (const i of [ia, ib])
      expect((await db().entities.invite.get({ inviteUuid: i.uuid }).go({ consistent: true })).data?.status).toBe('EXPIRED');

    const answer = async (method: string, path: string, token: string) => {
      const res = await api.call(method, path, { token });
      return `${res.status} ${res.body.error?.code}`;
    };
    expect(await answer('POST', `/api/invites/${ia.uuid}/accept`, a.token)).toBe('410 invite_expired');
    expect(await answer('POST', `/api/invites/${ia.uuid}/decline`, a.token)).toBe('410 invite_expired');
    expect(await answer('GET', `/api/invites/${ia.uuid}`, a.token)).toBe('410 invite_expired');
    expect(await answer('POST', `/api/invites/${ia.uuid}/accept`, b.token)).toBe('403 invite_email_mismatch');
    expect(await answer('GET', `/api/teams/${slug}/invites/${ia.id}`, owner.token)).toBe('404 not_found');
    expect(await answer('DELETE', `/api/teams/${slug}/invites/${ia.id}`, owner.token)).toBe('404 not_found');
    expect(await mine(a)).toBeUndefined();
    const listed = (await api.call('GET', `/api/teams/${slug}/invites?limit=1000`, { token: owner.token })).body.data.map(
      (i: { uuid: string }) => i.uuid,
    );
    expect(listed).not.toContain(ia.uuid);

    // Re-invite revives a's invite; resend revives b's: same invites, PENDING again, listed, with a new expiry.
    expect(
      (await api.call('POST', `/api/teams/${slug}/invites`, { token: owner.token, json: { email: a.email, role: 'MEMBER' } })).status,
    ).toBe(201);
    expect(await answer('POST', `/api/teams/${slug}/invites/${ib.id}/resend`, owner.token)).toBe('200 undefined');
    for (const [user, i, role] of [
      [a, ia, 'MEMBER'],
      [b, ib, 'ADMIN'],
    ] as const) {
      const back = await mine(user);
      expect(back).toMatchObject({ uuid: i.uuid, id: i.id, status: 'PENDING', role });
      expect(Date.parse(back.expiresAt)).toBeGreaterThan(Date.now() + 6 * DAY);
      expect(await answer('GET', `/api/teams/${slug}/invites/${i.id}`, owner.token)).toBe('200 undefined');
    }
    // A renewed invite is in gsi3 again, under its new expiry: a sweep now leaves it alone.
    await sweepAll();
    expect((await db().entities.invite.get({ inviteUuid: ia.uuid }).go({ consistent: true })).data?.status).toBe('PENDING');
    expect(await answer('POST', `/api/invites/${ia.uuid}/accept`, a.token)).toBe('200 undefined');
    expect(await answer('POST', `/api/invites/${ia.uuid}/accept`, a.token)).toBe('409 invite_not_pending');
    expect(await answer('POST', `/api/invites/${ib.uuid}/decline`, b.token)).toBe('200 undefined');
    expect(await answer('POST', `/api/invites/${ib.uuid}/decline`, b.token)).toBe('409 invite_not_pending');
  });

  it('sweeps only PENDING invites that expired: ended, renewed and unexpired ones keep their state', async () => {
    const users = [await signUp(api), await signUp(api), await signUp(api)];
    for (const user of users) {
      expect(
        (await api.call('POST', `/api/teams/${slug}/invites`, { token: owner.token, json: { email: user.email, role: 'MEMBER' } })).status,
      ).toBe(201);
    }
    const uuids: string[] = [];
    for (const user of users) {
      uuids.push(
        (await api.call('GET', '/api/invites', { token: user.token })).body.data.find(
          (i: { team: { slug: string } }) => i.team.slug === slug,
        ).uuid,
      );
    }
    const [declined, live, expired] = uuids as [string, string, string];
    expect((await api.call('POST', `/api/invites/${declined}/decline`, { token: (users[0] as TestUser).token })).status).toBe(200);
    await expireInvite(expired);
    await sweepAll();
    const status = async (inviteUuid: string) => (await db().entities.invite.get({ inviteUuid }).go({ consistent: true })).data?.status;
    expect([await status(declined), await status(live), await status(expired)]).toEqual(['DECLINED', 'PENDING', 'EXPIRED']);
  });

  it('a run is bounded: out of time it stops where it is, and the next run goes on from its watermark', async () => {
    const before = (await db().entities.inviteSweep.get({}).go({ consistent: true })).data;
    const user = await signUp(api);
    expect(
      (await api.call('POST', `/api/teams/${slug}/invites`, { token: owner.token, json: { email: user.email, role: 'MEMBER' } })).status,
    ).toBe(201);
    const uuid = (await api.call('GET', '/api/invites', { token: user.token })).body.data[0].uuid;
    await expireInvite(uuid);
    const stopped = await sweepExpiredInvites(db(), new Date(), () => false);
    expect(stopped).toMatchObject({ expired: 0, queries: 0, caughtUp: false, sweptBefore: before?.sweptBefore });
    expect((await db().entities.inviteSweep.get({}).go({ consistent: true })).data?.sweptBefore).toBe(before?.sweptBefore);
    const resumed = await sweepAll();
    expect(resumed).toMatchObject({ expired: 1, caughtUp: true });
    // Every hour before the current one is done: the watermark is the current hour.
    expect(resumed.sweptBefore).toBe(new Date().toISOString().slice(0, 13));
    // A caught-up run reads one Query per shard of the current hour, and nothing else.
    expect(await sweepAll()).toMatchObject({ expired: 0, skipped: 0, queries: 32, caughtUp: true });
  });
});
