import { describe, expect, it } from 'vitest';
import { FUNCTION_DEFAULTS } from '#lib/http/routes.ts';
import { log } from '#lib/core/log.ts';
import { type TestUser, addMember, createTeam, freshEmail, signUp, useApi } from '../helpers/api.ts';

// Each team's hourly invitation mails, for this file: exactly what the 100-row request sends, so
// that the allowance test can spend it. lib/core/config.ts reads it once, on load: modules that load it
// are imported inside the tests, after this line has run.
process.env.INVITE_MAILS_PER_TEAM_HOUR = '100';
const db = async () => (await import('#lib/db/service.ts')).db();

const api = useApi();

const bulk = (by: TestUser, slug: string, invites: unknown, headers: Record<string, string> = {}) =>
  api.call('POST', `/api/teams/${slug}/invites/bulk`, { token: by.token, json: { invites }, headers });

const single = (by: TestUser, slug: string, body: unknown) =>
  api.call('POST', `/api/teams/${slug}/invites`, { token: by.token, json: body });

interface Listed {
  id: number;
  uuid: string;
  email: string;
  role: string;
}

const pendingOf = async (by: TestUser, slug: string): Promise<Listed[]> => {
  const res = await api.call('GET', `/api/teams/${slug}/invites?limit=1000`, { token: by.token });
  expect(res.status).toBe(200);
  return res.body.data;
};

/** Invitation e-mails queued (outbox messages) for these invites, by invite UUID. */
const mailsFor = async (uuids: readonly string[]): Promise<Map<string, number>> => {
  const d = await db();
  const { data } = await d.entities.outboxMessage.scan.where((a, op) => op.eq(a.kind, 'invitation')).go({ pages: 'all' });
  const counts = new Map(uuids.map((u) => [u, 0]));
  for (const m of data) if (m.inviteUuid && counts.has(m.inviteUuid)) counts.set(m.inviteUuid, (counts.get(m.inviteUuid) ?? 0) + 1);
  return counts;
};

const rows = (count: number, role = 'MEMBER') => Array.from({ length: count }, () => ({ email: freshEmail('bulk'), role }));

describe('POST /api/teams/{slug}/invites/bulk', () => {
  it('answers each row as the single invite would, in order: successes are pending invites with one e-mail each', async () => {
    const [owner, admin, member] = [await signUp(api, 'owner'), await signUp(api, 'admin'), await signUp(api, 'member')];
    const { slug } = await createTeam(api, owner);
    await addMember(api, slug, owner, admin, 'ADMIN');
    await addMember(api, slug, owner, member, 'MEMBER');
    const [first, second, bounced] = [freshEmail('first'), freshEmail('second'), freshEmail('bounced')];
    const { SUPPRESSED_MESSAGE, suppress } = await import('#lib/mail/suppression.ts');
    await suppress(await db(), { email: bounced, reason: 'bounce', detail: '550 5.1.1 user unknown', at: new Date().toISOString() });

    const asked: unknown[] = [
      { email: ` ${first.toUpperCase()} `, role: 'MEMBER' },
      { email: member.email, role: 'MEMBER' },
      { email: 'not-an-address', role: 'MEMBER' },
      { email: freshEmail('owner'), role: 'OWNER' },
      { email: first, role: 'ADMIN' },
      { email: bounced, role: 'MEMBER' },
      { email: 5, role: 'MEMBER' },
      'grace@example.com',
      { email: freshEmail('boss'), role: 'BOSS' },
      { role: 'MEMBER' },
      { email: admin.email, role: 'MEMBER' },
      { email: second, role: 'ADMIN' },
    ];
    const res = await bulk(admin, slug, asked);
    expect(res.status).toBe(200);
    const results = res.body.data;
    expect(results.map((r: { email: string | null; status: number; code?: string }) => [r.email, r.status, r.code])).toEqual([
      [first, 201, undefined],
      [member.email, 409, 'already_member'],
      ['not-an-address', 422, 'validation_failed'],
      [(asked[3] as { email: string }).email, 403, 'forbidden'],
      [first, 422, 'validation_failed'],
      [bounced, 422, 'validation_failed'],
      [null, 400, 'invalid_body'],
      [null, 400, 'invalid_body'],
      [(asked[8] as { email: string }).email, 422, 'validation_failed'],
      [null, 422, 'validation_failed'],
      [admin.email, 409, 'already_member'],
      [second, 201, undefined],
    ]);
    expect(results[3].message).toBe('Only an owner can invite an owner.');
    expect(results[4]).toMatchObject({ message: expect.stringContaining('invites[0]'), fields: { email: 'repeats invites[0]' } });
    expect(results[5].fields).toEqual({ email: SUPPRESSED_MESSAGE });
    expect(results[6].fields).toEqual({ email: 'must be a string, not number' });
    expect(results[9].fields).toEqual({ email: 'is required' });

    // Each refused row has the single invite's answer to the same body (which changes nothing), but
    // for the duplicate and the wording of "not an object".
    for (const n of [1, 2, 3, 5, 6, 7, 8, 9, 10]) {
      const { status, body } = await single(admin, slug, asked[n]);
      const { code, message, fields } = results[n];
      if (n === 7) expect([status, body.error.code]).toEqual([400, code]);
      else
        expect({ status, ...body.error }, `row ${n}`).toEqual({ status: results[n].status, code, message, ...(fields ? { fields } : {}) });
    }

    // The successes are the team's pending invites, exactly as its list shows them, each with one e-mail.
    const pending = await pendingOf(owner, slug);
    expect(pending).toHaveLength(2);
    expect(pending).toEqual(expect.arrayContaining([results[0].invite, results[11].invite]));
    expect(results[0].invite).toMatchObject({ email: first, role: 'MEMBER', status: 'PENDING', invitedBy: { email: admin.email } });
    expect(results[11].invite).toMatchObject({ email: second, role: 'ADMIN' });
    expect([...(await mailsFor(pending.map((i) => i.uuid))).values()]).toEqual([1, 1]);
  });

  it('re-invites an address with a pending invite: the same invite, a new role, a second e-mail', async () => {
    const owner = await signUp(api);
    const { slug } = await createTeam(api, owner);
    const email = freshEmail('again');
    expect((await single(owner, slug, { email, role: 'MEMBER' })).status).toBe(201);
    const [before] = await pendingOf(owner, slug);
    const res = await bulk(owner, slug, [{ email, role: 'ADMIN' }]);
    expect(res.body.data).toEqual([
      { email, status: 201, invite: expect.objectContaining({ id: before?.id, uuid: before?.uuid, role: 'ADMIN' }) },
    ]);
    const after = await pendingOf(owner, slug);
    expect(after).toEqual([res.body.data[0].invite]);
    expect([...(await mailsFor([before?.uuid as string])).values()]).toEqual([2]);
  });

  it('refuses the whole request only for a list that is not 1 to 100 rows (400, 422), writing nothing', async () => {
    const owner = await signUp(api);
    const { slug } = await createTeam(api, owner);
    const whole = async (body: unknown) => {
      const res = await api.call('POST', `/api/teams/${slug}/invites/bulk`, { token: owner.token, json: body });
      return [res.status, res.body.error?.code, res.body.error?.fields];
    };
    const rowsError = 'must hold 1 to 100 invites';
    expect(await whole({ invites: [] })).toEqual([422, 'validation_failed', { invites: rowsError }]);
    expect(await whole({ invites: rows(101) })).toEqual([422, 'validation_failed', { invites: rowsError }]);
    expect(await whole({})).toEqual([422, 'validation_failed', { invites: 'is required' }]);
    expect(await whole({ invites: 'a@example.com' })).toEqual([400, 'invalid_body', { invites: 'must be an array, not string' }]);
    expect(await whole({ invites: { email: 'a@example.com', role: 'MEMBER' } })).toEqual([
      400,
      'invalid_body',
      { invites: 'must be an array, not object' },
    ]);
    expect(await pendingOf(owner, slug)).toEqual([]);
  });

  it('answers 404 or 403 once, before any row, for a caller who may not invite: nothing written', async () => {
    const [owner, member, stranger] = [await signUp(api), await signUp(api), await signUp(api)];
    const unconfirmed = await signUp(api, 'unconfirmed', { confirmed: false });
    const { slug } = await createTeam(api, owner);
    const theirs = await createTeam(api, unconfirmed);
    await addMember(api, slug, owner, member, 'MEMBER');
    // Bad rows too: a caller who cannot invite learns nothing of them.
    const asked = [...rows(2), { email: 'nope', role: 'MEMBER' }, 7];
    const answer = async (by: TestUser, s: string) => {
      const res = await bulk(by, s, asked);
      return [res.status, res.body.error?.code];
    };
    expect(await answer(member, slug)).toEqual([403, 'forbidden']);
    expect(await answer(stranger, slug)).toEqual([404, 'not_found']);
    expect(await answer(owner, 'no-such-team')).toEqual([404, 'not_found']);
    expect(await answer(unconfirmed, theirs.slug)).toEqual([403, 'email_not_verified']);
    expect(await pendingOf(owner, slug)).toEqual([]);
    const { data } = await (await db()).entities.invite.query.byTeam({ teamId: theirs.id }).go({ pages: 'all' });
    expect(data).toEqual([]);
  });

  it('charges the mail allowance row by row: once spent, the remaining rows get 429 and send nothing', async () => {
    const owner = await signUp(api);
    const { slug } = await createTeam(api, owner);
    // Three of the team's 100 mails this hour go to single invites.
    for (const email of [freshEmail(), freshEmail(), freshEmail()])
      expect((await single(owner, slug, { email, role: 'MEMBER' })).status).toBe(201);
    const asked = rows(100);
    const res = await bulk(owner, slug, asked);
    expect(res.status).toBe(200);
    const statuses = res.body.data.map((r: { status: number }) => r.status);
    expect(statuses.filter((s: number) => s === 201)).toHaveLength(97);
    const limited = statuses.flatMap((s: number, n: number) => (s === 429 ? [n] : []));
    expect(limited).toHaveLength(3);
    // Rows start in order, 8 at a time: those refused are among the last to start.
    expect(Math.min(...limited)).toBeGreaterThanOrEqual(100 - 8);
    for (const n of limited) {
      expect(res.body.data[n]).toEqual({ email: asked[n]?.email, status: 429, code: 'rate_limited', message: expect.any(String) });
    }
    const pending = await pendingOf(owner, slug);
    expect(pending).toHaveLength(100);
    const refused = new Set(limited.map((n: number) => asked[n]?.email));
    expect(pending.filter((i) => refused.has(i.email))).toEqual([]);
    expect([...(await mailsFor(pending.map((i) => i.uuid))).values()].every((count) => count === 1)).toBe(true);
    // The next request finds the allowance spent for every row.
    const later = await bulk(owner, slug, rows(2));
    expect(later.body.data.map((r: { code: string }) => r.code)).toEqual(['rate_limited', 'rate_limited']);
  });

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
    // One e-mail per row that succeeded: none lost, none doubled.
    const mails = await mailsFor(pending.map((i) => i.uuid));
    const sent = [...mails.values()].reduce((a, b) => a + b, 0);
    expect(sent).toBe(results.filter((r) => r.status === 201).length);
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
