/**
 * What one address may be sent, whoever asks (issue 23; lib/limits/recipient-mail.ts, docs/mail.md
 * "Allowances"), against DynamoDB Local: the flood of invitations from many accounts and teams, the
 * sign-up / resend / delete cycle, the nomination loop, the reset requests for known and unknown
 * addresses, and the recipient's one-click "no more" (lib/mail/blocks.ts). The mailer is run here
 * (deliver) on the messages the requests wrote, with a transport that records what it would send.
 */
import { request } from 'node:http';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { db } from '#lib/db/service.ts';
import { UNSOLICITED_SPENT } from '#lib/limits/recipient-mail.ts';
import { deliver } from '#lib/mail/outbox.ts';
import { outboxRefOf } from '#lib/mail/outbox-ref.ts';
import type { MailMessage } from '#lib/mail/safety.ts';
import type { Mailer } from '#lib/mail/transports.ts';
import { issueToken } from '#lib/auth/account-tokens.ts';
import { type TestUser, addMember, createTeam, freshEmail, signUp, useApi } from '../helpers/api.ts';
import { expireInvite } from '../helpers/invites.ts';

// The defaults of a deployment, but for the sign-up and reset requests one network may make (the
// reset test runs each network's bucket dry) and tokens that outlive the moved clocks. Hoisted:
// lib/core/config.ts reads them once, when this file's imports load it.
vi.hoisted(() => {
  Object.assign(process.env, {
    RECIPIENT_MAIL_GAP_SECONDS: '60',
    UNSOLICITED_MAILS_PER_ADDRESS_HOUR: '3',
    UNSOLICITED_MAILS_PER_ADDRESS_DAY: '10',
    ACCOUNT_MAILS_PER_ADDRESS_HOUR: '5',
    RATE_LIMIT_SIGNUP_BURST: '30',
    RATE_LIMIT_SIGNUP_REFILL: '30',
    ACCESS_TOKEN_TTL_SECONDS: String(3 * 24 * 3600),
  });
});

const api = useApi();
const MINUTE = 60_000;

/** What the mailer would have sent, by recipient. */
const sent: MailMessage[] = [];
const recording: Mailer = {
  kind: 'log',
  maxSendMs: 0,
  send: async (message) => {
    sent.push(message);
  },
};
const sentTo = (address: string) => sent.filter((m) => m.to === address);

/** Runs the mailer, at the (possibly moved) clock, over every message not handled yet. */
const deliverPending = async () => {
  const { data } = await db()
    .entities.outboxMessage.scan.where((a, op) => op.eq(a.status, 'PENDING'))
    .go({ pages: 'all' });
  for (const item of data) {
    const ref = outboxRefOf(item);
    if (ref) await deliver(db(), recording, ref);
  }
};

/** Moves the clock the handlers and the mailer read (Date only: DynamoDB's calls keep real timers). */
const later = (ms: number) => vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + ms });
afterEach(() => vi.useRealTimers());

const invite = (by: TestUser, slug: string, email: string) =>
  api.call('POST', `/api/teams/${slug}/invites`, { token: by.token, json: { email, role: 'MEMBER' } });

describe('invitations to one address, from every sender together', () => {
  it('three accounts with ten teams flooding one address: one e-mail a minute, three an hour', async () => {
    const senders = await Promise.all(['ann', 'ben', 'cy'].map((name) => signUp(api, name)));
    const teams = await Promise.all(
      Array.from({ length: 10 }, async (_, n) => {
        const owner = senders[n % 3] as TestUser;
        return { owner, slug: (await createTeam(api, owner)).slug };
      }),
    );
    const victim = freshEmail('victim');

    // As fast as they can: five invitations from each team at once.
    const answers = await Promise.all(teams.flatMap(({ owner, slug }) => Array.from({ length: 5 }, () => invite(owner, slug, victim))));
    const created = answers.filter((a) => a.status === 201);
    const refused = answers.filter((a) => a.status === 429);
    expect(created).toHaveLength(1);
    expect(refused).toHaveLength(49);
    for (const r of refused) {
      expect(r.body.error).toMatchObject({ code: 'rate_limited', message: UNSOLICITED_SPENT });
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
    }
    await deliverPending();
    expect(sentTo(victim)).toHaveLength(1);

    // A minute on, each minute, whoever asks (teams that have not invited it yet): the hour's three,
    // then 429 until it refills.
    const statuses: number[] = [];
    const fresh = await Promise.all(
      senders.concat(senders[0] as TestUser).map(async (owner) => ({ owner, slug: (await createTeam(api, owner)).slug })),
    );
    for (const { owner, slug } of fresh) {
      later(61_000);
      statuses.push((await invite(owner, slug, victim)).status);
    }
    expect(statuses).toEqual([201, 201, 429, 429]);
    await deliverPending();
    expect(sentTo(victim)).toHaveLength(3);
  });

  it('a day holds ten at once, then one each 2.4 hours: trying every 20 minutes for two days', async () => {
    const owner = await signUp(api, 'persistent');
    const { slug } = await createTeam(api, owner);
    const to = freshEmail('pestered');
    let firstDay = 0;
    let secondDay = 0;
    for (let n = 0; n < 144; n++) {
      later(20 * MINUTE);
      const res = await invite(owner, slug, to);
      if (res.status !== 201) continue;
      if (n < 72) firstDay += 1;
      else secondDay += 1;
      // Withdrawn at once, so that the next try is a new invitation (a re-invite mails nothing).
      const [pending] = (await api.call('GET', `/api/teams/${slug}/invites`, { token: owner.token })).body.data;
      expect((await api.call('DELETE', `/api/teams/${slug}/invites/${pending.id}`, { token: owner.token })).status).toBe(200);
    }
    // GCRA (lib/limits/token-bucket.ts): the first day may add its refill to the ten; after that, ten a day.
    expect(firstDay).toBeLessThanOrEqual(19);
    expect(secondDay).toBeLessThanOrEqual(11);
    expect(secondDay).toBeGreaterThanOrEqual(9);
  });

  it('an expired invite invited again is renewed and mailed again (its link is dead)', async () => {
    const owner = await signUp(api, 'reviver');
    const { slug } = await createTeam(api, owner);
    const to = freshEmail('lapsed');
    expect((await invite(owner, slug, to)).status).toBe(201);
    const [pending] = (await api.call('GET', `/api/teams/${slug}/invites`, { token: owner.token })).body.data;
    await expireInvite(pending.uuid);
    later(61_000);
    expect((await invite(owner, slug, to)).status).toBe(201);
    await deliverPending();
    expect(sentTo(to)).toHaveLength(2);
  });

  it('a re-invite of a pending invite sends nothing; resend does, within the allowance', async () => {
    const owner = await signUp(api, 'reinviter');
    const { slug } = await createTeam(api, owner);
    const to = freshEmail('reinvited');
    expect((await invite(owner, slug, to)).status).toBe(201);
    expect((await invite(owner, slug, to)).status).toBe(201);
    await deliverPending();
    expect(sentTo(to)).toHaveLength(1);
    const [pending] = (await api.call('GET', `/api/teams/${slug}/invites`, { token: owner.token })).body.data;
    // Within a minute of the first: the gap holds for resends too.
    expect((await api.call('POST', `/api/teams/${slug}/invites/${pending.id}/resend`, { token: owner.token })).status).toBe(429);
    later(61_000);
    expect((await api.call('POST', `/api/teams/${slug}/invites/${pending.id}/resend`, { token: owner.token })).status).toBe(200);
    await deliverPending();
    expect(sentTo(to)).toHaveLength(2);
  });
});

describe('ownership nominations', () => {
  it('nominating and withdrawing in a loop mails the member once a minute, three times an hour', async () => {
    const owner = await signUp(api, 'nominator');
    const member = await signUp(api, 'nominee');
    const { slug } = await createTeam(api, owner);
    const memberId = await addMember(api, slug, owner, member, 'ADMIN');
    const nominate = () => api.call('POST', `/api/teams/${slug}/transfer`, { token: owner.token, json: { memberId } });
    const withdraw = () => api.call('DELETE', `/api/teams/${slug}/transfer`, { token: owner.token });

    const statuses: number[] = [];
    for (let n = 0; n < 30; n++) {
      statuses.push((await nominate()).status);
      await withdraw();
    }
    expect(statuses[0]).toBe(201);
    expect(statuses.slice(1).every((s) => s === 429)).toBe(true);
    // A minute apart: the hour's three (the member's invitation among them), then refused.
    for (let n = 0; n < 3; n++) {
      later(61_000);
      statuses.push((await nominate()).status);
      await withdraw();
    }
    expect(statuses.slice(30)).toEqual([201, 429, 429]);
  });
});

describe('account mail to one address', () => {
  it('signing up, resending and deleting in a loop sends at most the address allowance in an hour', async () => {
    const victim = freshEmail('squatted');
    const password = 'correct horse battery staple';
    for (let cycle = 0; cycle < 7; cycle++) {
      const signedUp = await api.call('POST', '/api/auth/signup', { json: { email: victim, password, firstName: 'Sq', lastName: 'Uat' } });
      expect(signedUp.status).toBe(201);
      const token = signedUp.body.data.session.access_token as string;
      for (let n = 0; n < 5; n++) await api.call('POST', '/api/auth/verify/resend', { token });
      await deliverPending();
      expect((await api.call('DELETE', '/api/auth/user', { token, json: { currentPassword: password } })).status).toBe(200);
      later(61_000);
    }
    // One confirmation per minute at most (the resends within it are not sent), and five an hour.
    expect(sentTo(victim)).toHaveLength(5);
    const messages = (
      await db()
        .entities.outboxMessage.scan.where((a, op) => op.eq(a.address, victim))
        .go({ pages: 'all' })
    ).data;
    expect(messages.filter((m) => m.status === 'FAILED' && /allowance/.test(m.error ?? '')).length).toBeGreaterThan(0);
  });

  it("a failed send gives the recipient's tokens back: its retry is not refused for its own first try", async () => {
    const email = freshEmail('retried');
    await api.call('POST', '/api/auth/signup', {
      json: { email, password: 'correct horse battery staple', firstName: 'R', lastName: 'T' },
    });
    const { data } = await db()
      .entities.outboxMessage.scan.where((a, op) => op.eq(a.address, email))
      .go({ pages: 'all' });
    const ref = outboxRefOf(data[0] ?? {});
    if (!ref) throw new Error('no confirmation message');
    const failing: Mailer = { kind: 'log', maxSendMs: 0, send: () => Promise.reject(new Error('SES throttled the send')) };
    await expect(deliver(db(), failing, ref)).rejects.toThrow('throttled');
    expect(await deliver(db(), recording, ref)).toEqual({ outcome: 'sent' });
    expect(sentTo(email)).toHaveLength(1);
  });

  it("a change's notice goes to the old address even when strangers spent its hour with reset requests", async () => {
    const user = await signUp(api, 'changer');
    for (let n = 0; n < 6; n++) {
      await api.call('POST', '/api/auth/recover', { json: { email: user.email } });
      await deliverPending();
      later(61_000);
    }
    const resets = sentTo(user.email).length;
    expect(resets).toBeLessThanOrEqual(5);
    const signedIn = (await api.call('POST', '/api/auth/signin', { json: { email: user.email, password: user.password } })).body.data
      .session;
    const changed = await api.call('PUT', '/api/auth/user', {
      token: signedIn.access_token,
      json: { email: freshEmail('moved'), currentPassword: user.password },
    });
    expect(changed.status).toBe(200);
    await deliverPending();
    expect(sent.filter((m) => m.to === user.email && m.subject.startsWith('A change of your Roster e-mail address'))).toHaveLength(1);
  });

  it('resets for a known and an unknown address: the same answers, one message each, from each network its own count', async () => {
    const known = (await signUp(api, 'resetter')).email;
    const unknown = freshEmail('nobody');
    /** POST /api/auth/recover from a loopback address of its own: a network with its own bucket. */
    const recoverFrom = (localAddress: string, email: string) =>
      new Promise<number>((resolve, reject) => {
        const body = JSON.stringify({ email });
        const req = request(
          `${api.url}/api/auth/recover`,
          { method: 'POST', localAddress, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
          (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          },
        );
        req.on('error', reject);
        req.end(body);
      });
    const knownAnswers: number[] = [];
    const unknownAnswers: number[] = [];
    for (let n = 0; n < 32; n++) {
      knownAnswers.push(await recoverFrom('127.0.0.2', known));
      unknownAnswers.push(await recoverFrom('127.0.0.3', unknown));
    }
    expect(knownAnswers).toEqual(unknownAnswers);
    expect(knownAnswers.filter((s) => s === 429)).toHaveLength(2);
    const written = async (address: string) =>
      (
        await db()
          .entities.outboxMessage.scan.where((a, op) => op.eq(a.address, address))
          .go({ pages: 'all' })
      ).data.filter((m) => m.kind === 'recovery').length;
    expect(await written(known)).toBe(await written(unknown));
    // This network's own bucket, through the documented client: the same 429 for any address.
    let last = 0;
    for (let n = 0; n < 40 && last !== 429; n++)
      last = (await api.call('POST', '/api/auth/recover', { json: { email: n % 2 ? known : unknown } })).status;
    expect(last).toBe(429);
    // What the mailer makes of them: one reset a minute to the account's address, none to the other.
    await deliverPending();
    expect(sentTo(known)).toHaveLength(1);
    expect(sentTo(unknown)).toHaveLength(0);
  });
});

describe('the recipient says no', () => {
  const form = (token: string, body: string, type = 'application/x-www-form-urlencoded') =>
    api.call('POST', `/unsubscribe?token=${encodeURIComponent(token)}`, {
      raw: body,
      headers: { 'content-type': type, accept: 'text/html' },
    });

  it('the one-click link of an invitation stops that team, then every team; the team sees it in its audit log', async () => {
    const owner = await signUp(api, 'blocked-owner');
    const other = await signUp(api, 'other-owner');
    const team = await createTeam(api, owner);
    const otherTeam = await createTeam(api, other);
    const to = freshEmail('unwilling');
    expect((await invite(owner, team.slug, to)).status).toBe(201);
    await deliverPending();
    const [mail] = sentTo(to);
    // The link in the body and in RFC 8058's header (lib/mail/transports.ts adds List-Unsubscribe-Post).
    const link = new URL(mail?.unsubscribe ?? '');
    expect(link.pathname).toBe('/unsubscribe');
    expect(mail?.text).toContain(mail?.unsubscribe);
    const token = link.searchParams.get('token') ?? '';

    const page = await api.call('GET', `/unsubscribe?token=${encodeURIComponent(token)}`, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(String(page.body)).toContain(to);
    expect(String(page.body)).toContain('No more from anyone on Roster');

    // A mail client's one-click POST: this team.
    const oneClick = await form(token, 'List-Unsubscribe=One-Click');
    expect(oneClick.status).toBe(200);
    expect(String(oneClick.body)).toContain('gets no more invitations or ownership proposals from');
    const audit = (await api.call('GET', `/api/teams/${team.slug}/audit?action=mail.blocked`, { token: owner.token })).body.data;
    expect(audit).toEqual([
      expect.objectContaining({
        action: 'mail.blocked',
        actor: { userId: null, email: to },
        target: { type: 'team', id: team.id, email: to },
        changes: { blocked: { after: 'team' } },
      }),
    ]);
    // Twice is once: no second entry.
    expect((await form(token, 'List-Unsubscribe=One-Click')).status).toBe(200);
    expect((await api.call('GET', `/api/teams/${team.slug}/audit?action=mail.blocked`, { token: owner.token })).body.data).toHaveLength(1);

    // The team's next invitation and resend answer as for a suppressed address; another team's goes.
    const [pending] = (await api.call('GET', `/api/teams/${team.slug}/invites`, { token: owner.token })).body.data;
    await api.call('DELETE', `/api/teams/${team.slug}/invites/${pending.id}`, { token: owner.token });
    later(61_000);
    const again = await invite(owner, team.slug, to);
    expect(again.status).toBe(422);
    expect(again.body.error.fields.email).toMatch(/asked not to be invited/);
    expect((await invite(other, otherTeam.slug, to)).status).toBe(201);

    // The page's other button: every team. The other team's invitation, queued already, is not sent.
    const everyone = await form(token, 'scope=everyone');
    expect(String(everyone.body)).toContain('from anyone on Roster');
    const before = sentTo(to).length;
    await deliverPending();
    expect(sentTo(to)).toHaveLength(before);
    later(61_000);
    const third = await createTeam(api, other);
    expect((await invite(other, third.slug, to)).status).toBe(422);
    // Under a block of every team, the team's one-click adds nothing and records nothing.
    const entries = async () =>
      (await api.call('GET', `/api/teams/${team.slug}/audit?action=mail.blocked`, { token: owner.token })).body.data;
    expect(await entries()).toHaveLength(2);
    await form(token, 'List-Unsubscribe=One-Click');
    expect(await entries()).toHaveLength(2);
  });

  it('a nominee who said no to the team is nominated, not mailed, and spends no allowance', async () => {
    const owner = await signUp(api, 'nominating-owner');
    const member = await signUp(api, 'unwilling-nominee');
    const team = await createTeam(api, owner);
    const memberId = await addMember(api, team.slug, owner, member, 'ADMIN');
    const stop = await issueToken(db(), { purpose: 'unsubscribe', email: member.email, teamId: team.id }, new Date());
    expect(String((await form(stop, 'List-Unsubscribe=One-Click')).body)).toContain('gets no more');
    await deliverPending();
    const before = sentTo(member.email).length;
    // Far past the gap and the hour's three, were they counted.
    for (let n = 0; n < 5; n++) {
      expect((await api.call('POST', `/api/teams/${team.slug}/transfer`, { token: owner.token, json: { memberId } })).status).toBe(201);
      await api.call('DELETE', `/api/teams/${team.slug}/transfer`, { token: owner.token });
    }
    await deliverPending();
    expect(sentTo(member.email)).toHaveLength(before);
  });

  it('takes the one-click POST as multipart too; a link that cannot be used changes nothing', async () => {
    const owner = await signUp(api, 'multipart-owner');
    const team = await createTeam(api, owner);
    const to = freshEmail('multipart');
    expect((await invite(owner, team.slug, to)).status).toBe(201);
    await deliverPending();
    const token = new URL(sentTo(to)[0]?.unsubscribe ?? '').searchParams.get('token') ?? '';
    const boundary = 'xYzZY';
    const multipart = `--${boundary}\r\nContent-Disposition: form-data; name="List-Unsubscribe"\r\n\r\nOne-Click\r\n--${boundary}--\r\n`;
    const res = await form(token, multipart, `multipart/form-data; boundary=${boundary}`);
    expect(String(res.body)).toContain('gets no more invitations');

    for (const bad of ['', 'not-a-token', token.slice(0, -2)]) {
      const page = await form(bad, 'List-Unsubscribe=One-Click');
      expect(page.status).toBe(200);
      expect(String(page.body)).toContain('This link cannot be used');
    }
    // A body that asks for nothing shows the buttons again and blocks nothing more.
    expect(String((await form(token, 'scope=nonsense')).body)).toContain('No more from anyone on Roster');
    const other = await signUp(api, 'multipart-other');
    const otherTeam = await createTeam(api, other);
    later(61_000);
    expect((await invite(other, otherTeam.slug, to)).status).toBe(201);
  });
});
