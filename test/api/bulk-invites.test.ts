import { describe, expect, it } from 'vitest';
import { type TestUser, addMember, createTeam, freshEmail, signUp, useApi } from '../helpers/api.ts';
import { bulkInvites, mailsFor, rows } from '../helpers/bulk-invites.ts';

// Each team's hourly invitation mails, for this file: exactly what the 100-row request sends, so
// that the allowance test can spend it. lib/core/config.ts reads it once, on load: modules that load it
// are imported inside the tests, after this line has run.
process.env.INVITE_MAILS_PER_TEAM_HOUR = '100';
const db = async () => (await import('#lib/db/service.ts')).db();

const api = useApi();
const { bulk, single, pendingOf } = bulkInvites(api);

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

  it('re-invites an address with a pending invite: the same invite, a new role, no second e-mail (resend mails again)', async () => {
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
    expect([...(await mailsFor([before?.uuid as string])).values()]).toEqual([1]);
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
});
