/**
 * `npm run outbox:redrive -- --older-than 15` against DynamoDB Local (this file's table), sending
 * through SMTP to a real SMTP server in this process: what it takes, what it prints, its exit code.
 */
import { execFile } from 'node:child_process';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { freePort } from '#infra/dynamodb-local.ts';
import { seedInvite, seedMessage, storedMessage } from '../helpers/outbox.ts';
import { testSmtp } from '../helpers/smtp.ts';

const smtpPort = await freePort();
const { inbox, start: startSmtp, stop: stopSmtp } = testSmtp(() => smtpPort);
beforeAll(startSmtp);
afterAll(stopSmtp);
beforeEach(() => {
  inbox.length = 0;
});

const MINUTE = 60_000;
const ago = (ms: number) => new Date(Date.now() - ms).toISOString();

interface Run {
  code: number;
  lines: string[];
  stderr: string;
}

/** The npm script as an operator runs it, with the environment `env` adds to or takes from this one's. */
const redrive = (args: string[], env: Record<string, string | undefined> = {}): Promise<Run> =>
  new Promise((resolve) => {
    const base = {
      ...process.env,
      SMTP_URL: `smtp://127.0.0.1:${smtpPort}`,
      SMTP_TIMEOUT_MS: '1000',
      MAIL_FROM: 'Roster <noreply@roster.example.com>',
      PUBLIC_URL: 'https://roster.example.com',
      ...env,
    };
    const merged = Object.fromEntries(Object.entries(base).filter((entry): entry is [string, string] => entry[1] !== undefined));
    execFile('npm', ['run', '--silent', 'outbox:redrive', '--', ...args], { env: merged }, (error, stdout, stderr) => {
      resolve({ code: error ? Number(error.code ?? 1) : 0, lines: stdout.trim().split('\n').filter(Boolean), stderr });
    });
  });

describe('npm run outbox:redrive', () => {
  it(
    'delivers what is stuck for longer than N minutes, one line each and a summary; a second run finds nothing',
    { timeout: 60_000 },
    async () => {
      const live = await seedInvite();
      const pending = await seedMessage(live.inviteUuid, 'invitation', { createdAt: ago(20 * MINUTE) });
      const lease = Date.now() - 16 * MINUTE;
      const abandoned = await seedMessage(live.inviteUuid, 'invitation', {
        createdAt: ago(17 * MINUTE),
        status: 'SENDING',
        leaseUntil: lease,
        dueAt: new Date(lease).toISOString(),
        attempts: 3,
      });
      const recent = await seedMessage(live.inviteUuid, 'invitation', { createdAt: ago(5 * MINUTE) });
      const sent = await seedMessage(live.inviteUuid, 'invitation', {
        createdAt: ago(30 * MINUTE),
        status: 'SENT',
        sentAt: ago(29 * MINUTE),
      });
      const revoked = await seedInvite({ status: 'REVOKED' });
      const skipped = await seedMessage(revoked.inviteUuid, 'invitation', { createdAt: ago(40 * MINUTE) });

      const run = await redrive(['--older-than', '15']);
      expect(run.code).toBe(0);
      expect(run.lines).toHaveLength(4);
      // Oldest first within a shard; shards in turn.
      const line = (id: string) => run.lines.find((l) => l.startsWith(id));
      expect(line(pending.messageId)).toMatch(/ invitation {2}PENDING due \S+, 0 attempt\(s\) before {2}→ {2}sent$/u);
      expect(line(abandoned.messageId)).toMatch(/ SENDING due \S+, 3 attempt\(s\) before {2}→ {2}sent$/u);
      expect(line(skipped.messageId)).toMatch(/→ {2}failed \(skipped: the invite is REVOKED\)$/u);
      expect(run.lines.at(-1)).toMatch(
        /^3 message\(s\) of table \S+ unfinished for more than 15 minute\(s\), transport smtp: 2 sent, 0 sent but not recorded, 1 failed \(never sent\), 0 not sent again \(unconfirmed\), 0 held by another mailer, 0 done before, 0 error\(s\) \(16 queries\)\.$/u,
      );
      expect(inbox.map((m) => m.messageId).sort()).toEqual([pending, abandoned].map((m) => `<${m.messageId}@roster.example.com>`).sort());
      expect(await storedMessage(pending)).toMatchObject({ status: 'SENT', attempts: 1 });
      expect(await storedMessage(abandoned)).toMatchObject({ status: 'SENT', attempts: 4, maybeSent: true });
      expect(await storedMessage(skipped)).toMatchObject({ status: 'FAILED' });
      expect((await storedMessage(recent))?.status).toBe('PENDING');
      expect((await storedMessage(sent))?.status).toBe('SENT');

      const again = await redrive(['--older-than', '15']);
      expect(again.code).toBe(0);
      expect(again.lines).toEqual([expect.stringMatching(/^0 message\(s\) .* 0 error\(s\) \(16 queries\)\.$/u)]);
      // --older-than 0: everything unfinished, the recent one too.
      const all = await redrive(['--older-than', '0']);
      expect(all.lines.find((l) => l.startsWith(recent.messageId))).toMatch(/→ {2}sent$/u);
      expect(inbox).toHaveLength(3);
    },
  );

  it('exits 1 and says so when a delivery fails; the message stays for the next run', { timeout: 60_000 }, async () => {
    const live = await seedInvite();
    const stuck = await seedMessage(live.inviteUuid, 'invitation', { createdAt: ago(60 * MINUTE) });
    await stopSmtp();
    let run: Run;
    try {
      run = await redrive(['--older-than', '15']);
    } finally {
      await startSmtp();
    }
    expect(run.code).toBe(1);
    expect(run.lines.find((l) => l.startsWith(stuck.messageId))).toMatch(/→ {2}error: .*(ECONNREFUSED|connect)/u);
    expect(run.lines.at(-1)).toMatch(/ 1 error\(s\) /u);
    expect(await storedMessage(stuck)).toMatchObject({ status: 'PENDING', attempts: 1 });
  });

  it('refuses to run against AWS without the mailer’s settings, naming them', async () => {
    const run = await redrive(['--older-than', '15'], { DYNAMODB_ENDPOINT: undefined, MAIL_TRANSPORT: undefined, PUBLIC_URL: undefined });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('set MAIL_TRANSPORT, PUBLIC_URL as the stack sets them for the mailer');
  });
});
