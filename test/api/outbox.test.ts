/**
 * The outbox end to end: invites through the local server, DynamoDB Local's stream read by the
 * stream poller, the mailer handler sending through SMTP to a real SMTP server (smtp-server) in
 * this process, and the outbox sweeper on its local timer (every second, a 2 s grace period here)
 * for what the mailer could not send. Last, `node infra/local.ts` killed right after an invite is
 * acknowledged.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Received, testSmtp } from '../helpers/smtp.ts';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { freePort } from '#infra/dynamodb-local.ts';
import type { Schedule } from '#infra/schedules.ts';
import type { LocalBackground } from '#infra/local-background.ts';
import { type Api, apiAt, createTeam, freshEmail, signUp, useApi } from '../helpers/api.ts';

const PUBLIC_URL = 'https://roster.example.com';
const smtpPort = await freePort();
// Read when the handlers and the mailer load, which is only after this.
process.env.SMTP_URL = `smtp://127.0.0.1:${smtpPort}`;
process.env.MAIL_FROM = 'Roster <noreply@roster.example.com>';
process.env.PUBLIC_URL = PUBLIC_URL;
process.env.SMTP_TIMEOUT_MS = '1000';
process.env.OUTBOX_SWEEP_GRACE_MS = '2000';

const { inbox, start: startSmtp, stop: stopSmtp } = testSmtp(() => smtpPort);

/**
 * Waits until `count` messages went to `to` (those whose subject matches `about`: a signed-up
 * account also gets its verification e-mail), then a little longer to catch a duplicate.
 */
const mailsTo = async (to: string, count = 1, withinMs = 20_000, about = /./u): Promise<Received[]> => {
  const deadline = Date.now() + withinMs;
  const mine = () => inbox.filter((m) => m.to.includes(to) && about.test(m.subject));
  while (mine().length < count && Date.now() < deadline) await sleep(50);
  await sleep(1000);
  return mine();
};

const api = useApi();
let poller: LocalBackground;
let sweeper: Schedule;
const startPoller = async () => {
  const { startLocalBackground } = await import('#infra/local-background.ts');
  poller = await startLocalBackground({
    baseDelayMs: 200,
    maxDelayMs: 1000,
    maxAttempts: 30,
  });
};

beforeAll(async () => {
  await startSmtp();
  await startPoller();
  sweeper = (await import('#infra/schedules.ts')).startSchedule('outbox-sweep', 1000);
});
afterAll(async () => {
  await sweeper.stop();
  await poller.stop();
  await stopSmtp();
});
beforeEach(() => {
  inbox.length = 0;
});

const outboxOf = async (inviteUuid: string) => {
  const { db } = await import('#lib/db/service.ts');
  return (
    await db()
      .entities.outboxMessage.scan.where((a, { eq }) => eq(a.inviteUuid, inviteUuid))
      .go({ pages: 'all' })
  ).data;
};

const invite = async (target: Api, owner: { token: string }, slug: string, email: string) => {
  const res = await target.call('POST', `/api/teams/${slug}/invites`, { token: owner.token, json: { email, role: 'MEMBER' } });
  expect(res.status).toBe(201);
  return res;
};

const myInviteUuid = async (invitee: { token: string }, slug: string): Promise<string> => {
  const mine = await api.call('GET', '/api/invites', { token: invitee.token });
  return mine.body.data.find((i: { team: { slug: string } }) => i.team.slug === slug).uuid;
};

describe('the outbox through the stream', () => {
  it('an invite made through the API reaches its invitee exactly once, with the link', async () => {
    const owner = await signUp(api, 'owner');
    const invitee = await signUp(api, 'invitee');
    const team = await createTeam(api, owner);
    await invite(api, owner, team.slug, invitee.email);
    const uuid = await myInviteUuid(invitee, team.slug);
    const mails = await mailsTo(invitee.email, 1, 20_000, /invited you/u);
    expect(mails).toHaveLength(1);
    expect(mails[0]?.subject).toBe(`owner Tester invited you to join Team ${team.slug} on Roster`);
    expect(mails[0]?.text).toContain(`${PUBLIC_URL}/invites/${uuid}?token=`);
    expect(await outboxOf(uuid)).toMatchObject([{ status: 'SENT', attempts: 1 }]);
  });

  it('SMTP down while inviting: the invite succeeds and its message waits; SMTP back: the sweeper delivers it once', async () => {
    const owner = await signUp(api, 'owner');
    const email = freshEmail('later');
    const team = await createTeam(api, owner);
    await stopSmtp();
    let uuid: string | undefined;
    try {
      const res = await invite(api, owner, team.slug, email);
      expect(res.status).toBe(201);
      const list = await api.call('GET', `/api/teams/${team.slug}/invites`, { token: owner.token });
      uuid = list.body.data.find((i: { email: string }) => i.email === email)?.uuid as string | undefined;
      // The mailer (or the sweeper) has tried and failed at least once: the message is back to PENDING with the error.
      const deadline = Date.now() + 10_000;
      for (;;) {
        const [m] = uuid ? await outboxOf(uuid) : [];
        if (m?.status === 'PENDING' && (m.attempts ?? 0) >= 1) break;
        if (Date.now() > deadline) throw new Error(`message not retried while SMTP was down: ${JSON.stringify(m)}`);
        await sleep(100);
      }
    } finally {
      await startSmtp();
    }
    const mails = await mailsTo(email);
    expect(mails).toHaveLength(1);
    const [m] = await outboxOf(uuid as string);
    expect(m?.status).toBe('SENT');
    expect(m?.attempts).toBeGreaterThanOrEqual(2);
  });

  it('a decline sends the inviter a notice', async () => {
    const owner = await signUp(api, 'owner');
    const invitee = await signUp(api, 'invitee');
    const team = await createTeam(api, owner);
    await invite(api, owner, team.slug, invitee.email);
    const uuid = await myInviteUuid(invitee, team.slug);
    expect((await api.call('POST', `/api/invites/${uuid}/decline`, { token: invitee.token })).status).toBe(200);
    const notices = await mailsTo(owner.email, 1, 20_000, /declined/u);
    expect(notices).toHaveLength(1);
    expect(notices[0]?.subject).toBe(`${invitee.email} declined your invitation to Team ${team.slug}`);
  });

  it('the whole stream read again (no checkpoint) sends nothing twice', async () => {
    await poller.stop();
    rmSync(join(process.env.DATA_DIR as string, 'stream-checkpoint.json'), { force: true });
    await startPoller();
    await sleep(3000);
    expect(inbox).toEqual([]);
  });
});

describe('account e-mail through the stream', () => {
  const helpers = () => import('../helpers/outbox.ts');
  const tokens = () => import('#lib/auth/account-tokens.ts');
  const LINK = { verification: '/verify', email_change: '/verify', recovery: '/reset' } as const;

  /** The one mail to `to` about `about`, and the token its link carries to `path`. */
  const tokenMailed = async (to: string, path: string, about: RegExp): Promise<{ mail: Received; token: string }> => {
    const [mail, ...more] = await mailsTo(to, 1, 20_000, about);
    expect(more).toEqual([]);
    const link = new RegExp(`${PUBLIC_URL.replace(/\./gu, '\\.')}${path}\\?token=([A-Za-z0-9_-]{43})`, 'u');
    const token = link.exec(mail?.text ?? '')?.[1];
    expect(token, `no ${path} link in ${JSON.stringify(mail)}`).toBeDefined();
    expect(mail?.html).toContain(`href="${PUBLIC_URL}${path}?token=${token}"`);
    return { mail: mail as Received, token: token as string };
  };

  /** Waits for the message to end, and answers it as stored. */
  const ended = async (messageId: string) => {
    const { storedMessage } = await helpers();
    const deadline = Date.now() + 20_000;
    for (;;) {
      const m = await storedMessage({ messageId });
      if (m?.status === 'SENT' || m?.status === 'FAILED') return m;
      if (Date.now() > deadline) throw new Error(`message not ended: ${JSON.stringify(m)}`);
      await sleep(50);
    }
  };

  it.each([
    ['verification', /^Confirm your e-mail address/u],
    ['recovery', /^Reset your Roster password/u],
    ['email_change', /^Confirm your new e-mail address/u],
  ] as const)(
    '%s: the mailed link carries a token findToken takes for that purpose only; a second message mails another',
    async (kind, about) => {
      const { seedAccountMessage, seedUser } = await helpers();
      const { findToken } = await tokens();
      const { db } = await import('#lib/db/service.ts');
      const newEmail = freshEmail('new');
      const user = await seedUser(kind === 'email_change' ? { newEmail, tokenEpoch: 2 } : { tokenEpoch: 2 });
      const to = kind === 'email_change' ? newEmail : user.email;
      const what = kind === 'recovery' ? { kind, address: to } : { kind, userUuid: user.userUuid, address: to };
      const first = await seedAccountMessage(what);
      const { mail, token } = await tokenMailed(to, LINK[kind], about);
      expect(mail.to).toEqual([to]);
      // Only the reset mail greets by name: the others go to addresses nobody has confirmed yet.
      expect(mail.text).toContain(kind === 'recovery' ? 'Hello Carl Ito,' : 'Hello,');
      expect(await ended(first.messageId)).toMatchObject({ status: 'SENT', attempts: 1 });
      const item = await findToken(db(), token, [kind], new Date());
      expect(item).toMatchObject({ purpose: kind, email: to, userUuid: user.userUuid, epoch: 2 });
      const minutes = kind === 'recovery' ? 60 : 24 * 60;
      expect(item.expiresAt - Date.parse(item.createdAt)).toBe(minutes * 60_000);
      expect(mail.text).toContain(`works for ${minutes === 60 ? '1 hour' : '24 hours'}`);
      const others = (['verification', 'recovery', 'email_change', 'invitation'] as const).filter((p) => p !== kind);
      await expect(findToken(db(), token, others, new Date())).rejects.toMatchObject({ code: 'token_expired' });

      inbox.length = 0;
      await seedAccountMessage(what);
      const second = await tokenMailed(to, LINK[kind], about);
      expect(second.token).not.toBe(token);
      expect((await findToken(db(), second.token, [kind], new Date())).email).toBe(to);
    },
  );

  it('email_change_notice: to the old address, naming the new one, no link', async () => {
    const { seedAccountMessage, seedUser } = await helpers();
    const newEmail = freshEmail('new');
    const user = await seedUser({ newEmail });
    const m = await seedAccountMessage({ kind: 'email_change_notice', userUuid: user.userUuid, address: user.email });
    const [mail, ...more] = await mailsTo(user.email);
    expect(more).toEqual([]);
    expect(mail?.subject).toBe('A change of your Roster e-mail address was requested');
    expect(mail?.text).toContain(newEmail);
    expect(mail?.text).toContain('If this was not you');
    expect(mail?.text).not.toContain(PUBLIC_URL);
    expect(await ended(m.messageId)).toMatchObject({ status: 'SENT' });
  });

  it('skips, FAILED and with no mail, what no longer applies', async () => {
    const { seedAccountMessage, seedUser } = await helpers();
    const confirmed = await seedUser({ emailConfirmedAt: new Date().toISOString() });
    const moved = await seedUser();
    const settled = await seedUser({ newEmail: freshEmail('other') });
    const gone = `gone-${randomUUID()}`;
    const unknown = freshEmail('unknown');
    const changedTo = freshEmail('changed');
    const bounced = await seedUser();
    const { suppress } = await import('#lib/mail/suppression.ts');
    const { db } = await import('#lib/db/service.ts');
    await suppress(db(), { email: bounced.email, reason: 'bounce', detail: 'Permanent/General', at: new Date().toISOString() });
    const cases = [
      [{ kind: 'recovery', address: bounced.email }, 'skipped: suppressed address'],
      [{ kind: 'verification', userUuid: confirmed.userUuid, address: confirmed.email }, 'skipped: the address is already confirmed'],
      [{ kind: 'verification', userUuid: moved.userUuid, address: freshEmail('before') }, 'skipped: the account has another address now'],
      [{ kind: 'verification', userUuid: gone, address: unknown }, 'skipped: the account no longer exists'],
      [{ kind: 'recovery', address: unknown }, 'skipped: no account has this address'],
      [
        { kind: 'email_change', userUuid: settled.userUuid, address: changedTo },
        'skipped: the change to this address is no longer pending',
      ],
      [{ kind: 'email_change_notice', userUuid: gone, address: unknown }, 'skipped: the account no longer exists'],
    ] as const;
    const messages = await Promise.all(cases.map(([what]) => seedAccountMessage(what)));
    for (const [i, m] of messages.entries()) expect(await ended(m.messageId)).toMatchObject({ status: 'FAILED', error: cases[i]?.[1] });
    await sleep(1000);
    const addresses = [...cases.map(([what]) => what.address), confirmed.email, moved.email, settled.email];
    expect(inbox.filter((mail) => addresses.some((a) => mail.to.includes(a)))).toEqual([]);
  });
});

/** `node infra/local.ts` on the test's DynamoDB Local with its own table and data directory. */
const startLocal = async (env: Record<string, string>): Promise<{ child: ChildProcess; url: string; output: () => string }> => {
  const child = spawn(process.execPath, ['infra/local.ts'], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const deadline = Date.now() + 30_000;
  for (;;) {
    const match = /Roster API on (http:\/\/\S+) /u.exec(output);
    if (match && output.includes('stream poller started')) return { child, url: match[1] as string, output: () => output };
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`local server did not start:\n${output}`);
    await sleep(50);
  }
};

const exited = (child: ChildProcess) =>
  new Promise<void>((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve())));

describe('a crash right after the invite is acknowledged', () => {
  it('delivers the message exactly once after the restart', { timeout: 180_000 }, async () => {
    const env = {
      PORT: '0',
      DATA_DIR: mkdtempSync(join(tmpdir(), 'roster-crash-')),
      TABLE_NAME: `crash-${randomUUID()}`,
      DYNAMODB_ENDPOINT: process.env.DYNAMODB_ENDPOINT as string,
      SMTP_URL: `smtp://127.0.0.1:${smtpPort}`,
      SMTP_TIMEOUT_MS: '1000',
      MAIL_FROM: 'Roster <noreply@roster.example.com>',
      PUBLIC_URL,
      OUTBOX_SWEEP_GRACE_MS: '2000',
    };
    // No SMTP server while the first process lives: nothing can be delivered before the kill.
    await stopSmtp();
    const first = await startLocal(env);
    const target = apiAt(first.url, env.TABLE_NAME);
    const owner = await signUp(target, 'owner');
    const team = await createTeam(target, owner);
    const email = freshEmail('crash');
    await invite(target, owner, team.slug, email);
    first.child.kill('SIGKILL');
    await exited(first.child);

    await startSmtp();
    const second = await startLocal(env);
    try {
      const mails = await mailsTo(email, 1, 150_000);
      expect(mails).toHaveLength(1);
      expect(mails[0]?.text).toMatch(new RegExp(`${PUBLIC_URL}/invites/[0-9a-f-]{36}`, 'u'));
      second.child.kill('SIGTERM');
      await exited(second.child);
      expect(second.child.exitCode).toBe(0);

      // A third start goes on after its checkpoint: still exactly one.
      const third = await startLocal(env);
      await sleep(2000);
      third.child.kill('SIGTERM');
      await exited(third.child);
      expect(inbox.filter((m) => m.to.includes(email))).toHaveLength(1);
    } finally {
      second.child.kill('SIGKILL');
    }
  });
});
