import { describe, expect, it } from 'vitest';
import { FUNCTION_DEFAULTS } from '#lib/http/routes.ts';
import { log } from '#lib/core/log.ts';
import { createTeam, freshEmail, signUp, useApi } from '../helpers/api.ts';
import { bulkInvites, mailsFor, rows } from '../helpers/bulk-invites.ts';

// Each team's hourly invitation mails, for this file: exactly what the 100-row request sends, so
// that the allowance test can spend it. lib/core/config.ts reads it once, on load: modules that load it
// are imported inside the tests, after this line has run.
process.env.INVITE_MAILS_PER_TEAM_HOUR = '100';
const db = async () => (await import('#lib/db/service.ts')).db();

const api = useApi();
const { bulk, pendingOf } = bulkInvites(api);

describe('POST /api/teams/{slug}/invites/bulk', () => {
  it('invites 100 addresses well within the function timeout', async () => {
    const owner = await signUp(api);
    const { slug } = await createTeam(api, owner);
    const asked = rows(100);
    const started = performance.now();
    const res = await bulk(owner, slug, asked);
    const ms = performance.now() - started;
    log.info('bulk invite of 100 rows', { ms: Math.round(ms), timeoutSeconds: FUNCTION_DEFAULTS.timeoutSeconds });
    expect(res.status).toBe(200);
    expect(res.body.data.map((r: { email: string; status: number }) => [r.email, r.status])).toEqual(asked.map((r) => [r.email, 201]));
    expect(ms).toBeLessThan(FUNCTION_DEFAULTS.timeoutSeconds * 1000);
    const pending = await pendingOf(owner, slug);
    expect(pending.map((i) => i.email).sort()).toEqual(asked.map((r) => r.email).sort());
    expect([...(await mailsFor(pending.map((i) => i.uuid))).values()].every((count) => count === 1)).toBe(true);
  });

  it('leaves exactly one pending invite per address when requests for the same addresses race', async () => {
    const owner = await signUp(api);
    const { slug, id } = await createTeam(api, owner);
    const emails = Array.from({ length: 16 }, () => freshEmail('raced'));
    // Four requests at once, over overlapping halves of the addresses, in different orders.
    const requests = [emails.slice(0, 10), emails.slice(6), [...emails].reverse(), emails.slice(3, 13)].map((list, k) =>
      list.map((email) => ({ email, role: k % 2 ? 'ADMIN' : 'MEMBER' })),
    );
    const answers = await Promise.all(requests.map((list) => bulk(owner, slug, list)));
    const results = answers.flatMap((a) => {
      expect(a.status).toBe(200);
      return a.body.data as { email: string; status: number; code?: string }[];
    });
    // Each row made or renewed the address's one invite, or lost every retry to the others (409 conflict).
    for (const r of results) expect([201, 409], JSON.stringify(r)).toContain(r.status);
    const pending = await pendingOf(owner, slug);
    expect(pending.map((i) => i.email).sort()).toEqual([...emails].sort());
    // Each address's (team, e-mail) claim points at its one pending invite.
    const claims = await (await db()).entities.pendingInvite.query.primary({ teamId: id }).go({ pages: 'all', consistent: true });
    expect(new Map(claims.data.map((c) => [c.email, c.inviteUuid]))).toEqual(new Map(pending.map((i) => [i.email, i.uuid])));
    // One e-mail per address, by the row that made its invite: the rows that renewed it (a
    // re-invite) mail nothing. None lost, none doubled.
    const mails = await mailsFor(pending.map((i) => i.uuid));
    expect([...mails.values()]).toEqual(pending.map(() => 1));
  });

  it('starts no row without time for it: the rest answer 503 each, and such an answer is not kept under a key', async () => {
    const owner = await signUp(api, 'owner');
    const team = await createTeam(api, owner);
    const [{ bulkInvite, hasRetryableRows }, { claimsOf }] = await Promise.all([
      import('#lib/teams/invites/bulk.ts'),
      import('#lib/auth/session-items.ts'),
    ]);
    const { claims } = await claimsOf(owner.token);
    const results = await bulkInvite(await db(), claims, team.slug, rows(3), new Date(), () => 1_000);
    expect(results.map((r) => [r.status, 'code' in r ? r.code : undefined])).toEqual([
      [503, 'unavailable'],
      [503, 'unavailable'],
      [503, 'unavailable'],
    ]);
    expect(hasRetryableRows(results)).toBe(true);
    expect(await pendingOf(owner, team.slug)).toEqual([]);
    const done = await bulkInvite(await db(), claims, team.slug, rows(2), new Date(), () => 9_000);
    expect(done.map((r) => r.status)).toEqual([201, 201]);
    expect(hasRetryableRows(done)).toBe(false);
  });
});
