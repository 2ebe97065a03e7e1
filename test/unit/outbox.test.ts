/**
 * lib/mail/outbox.ts: deliver() against DynamoDB Local, sending through the SMTP transport to a real
 * SMTP server (smtp-server) started in this process. Items are written through the entities.
 */
import { randomUUID } from 'node:crypto';
import { type Received, testSmtp } from '../helpers/smtp.ts';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { freePort } from '../../infra/dynamodb-local.ts';
import { db } from '../../lib/db/service.ts';
import { inviteLink } from '../../lib/mail/invitation.ts';
import { deliver, LeasedError } from '../../lib/mail/outbox.ts';
import { smtpMailer } from '../../lib/mail/transports.ts';


let port: number;

const { inbox, start: startSmtp, stop: stopSmtp } = testSmtp(() => port);

let mailer: ReturnType<typeof smtpMailer>;

beforeAll(async () => {
  port = await freePort();
  await startSmtp();
  mailer = smtpMailer({ from: 'Roster <noreply@roster.example.com>', smtpUrl: `smtp://127.0.0.1:${port}`, smtpTimeoutMs: 2000, smtpSendTimeoutMs: 5000 });
});
afterAll(stopSmtp);
beforeEach(() => {
  inbox.length = 0;
});

const NOW = new Date('2026-03-02T10:00:00.000Z');
const iso = (d: Date) => d.toISOString();
let ids = 0;

/** A team, its inviter and an invite; returns what the assertions need. */
const setUp = async (invite: { status?: 'PENDING' | 'ACCEPTED' | 'DECLINED' | 'REVOKED'; email?: string; expiresAt?: string } = {}) => {
  const d = db();
  const n = ++ids;
  const teamId = 1000 + n;
  const inviterUuid = randomUUID();
  const inviteUuid = randomUUID();
  const inviterEmail = `ann-${n}@example.com`;
  const email = invite.email ?? `bob-${n}@example.com`;
  await d.entities.user
    .create({ userUuid: inviterUuid, userId: 5000 + n, email: inviterEmail, firstName: 'Ann', lastName: 'Lee', passwordHash: 'x', createdAt: iso(NOW), updatedAt: iso(NOW) })
    .go();
  await d.entities.team
    .create({ teamId, name: `Acme ${n}`, slug: `acme-${n}`, ownerCount: 1, createdAt: iso(NOW), updatedAt: iso(NOW) })
    .go();
  await d.entities.invite
    .create({
      inviteUuid,
      inviteId: 7000 + n,
      teamId,
      email,
      role: 'ADMIN',
      status: invite.status ?? 'PENDING',
      invitedByUuid: inviterUuid,
      expiresAt: invite.expiresAt ?? '2026-03-09T10:00:00.000Z',
      createdAt: iso(NOW),
      updatedAt: iso(NOW),
    })
    .go();
  return { teamName: `Acme ${n}`, inviterEmail, email, inviteUuid };
};

const message = async (inviteUuid: string, kind: 'invitation' | 'declined' = 'invitation', over: Record<string, unknown> = {}) => {
  const messageId = (over.messageId as string | undefined) ?? randomUUID();
  await db()
    .entities.outboxMessage.create({ messageId, kind, inviteUuid, status: 'PENDING', createdAt: iso(NOW), ...over })
    .go();
  return messageId;
};

const stored = async (messageId: string) => (await db().entities.outboxMessage.get({ messageId }).go({ consistent: true })).data;

describe('deliver', () => {
  it('sends an invitation once: recipient, subject, link; the message becomes SENT', async () => {
    const s = await setUp();
    const id = await message(s.inviteUuid);
    expect(await deliver(db(), mailer, id, NOW)).toEqual({ outcome: 'sent' });
    expect(inbox).toHaveLength(1);
    const mail = inbox[0] as Received;
    expect(mail.to).toEqual([s.email]);
    expect(mail.subject).toBe(`Ann Lee invited you to join ${s.teamName} on Roster`);
    expect(mail.text).toContain(inviteLink(s.inviteUuid));
    expect(mail.html).toContain(`href="${inviteLink(s.inviteUuid)}"`);
    expect(mail.text).toContain('Admin');
    expect(mail.text).toContain('Monday, 9 March 2026, 10:00 UTC');
    expect(mail.messageId).toBe(`<${id}@roster.example.com>`);
    const after = await stored(id);
    expect(after).toMatchObject({ status: 'SENT', attempts: 1 });
    expect(after?.sentAt).toBeDefined();
    expect(after?.leaseUntil).toBeUndefined();
  });

  it('sends once when the same message is delivered twice, one after the other or at the same time', async () => {
    const s = await setUp();
    const id = await message(s.inviteUuid);
    await deliver(db(), mailer, id, NOW);
    expect(await deliver(db(), mailer, id, NOW)).toEqual({ outcome: 'done-before' });
    expect(inbox).toHaveLength(1);

    const id2 = await message(s.inviteUuid);
    const both = await Promise.allSettled([deliver(db(), mailer, id2, NOW), deliver(db(), mailer, id2, NOW)]);
    const sent = both.filter((r) => r.status === 'fulfilled' && r.value.outcome === 'sent');
    expect(sent).toHaveLength(1);
    const other = both.find((r) => !(r.status === 'fulfilled' && r.value.outcome === 'sent'));
    // The loser saw it leased (a retry later finds it SENT) or already SENT.
    if (other?.status === 'rejected') expect(other.reason).toBeInstanceOf(LeasedError);
    else expect(other?.status === 'fulfilled' && other.value.outcome).toBe('done-before');
    expect(inbox).toHaveLength(2);
    expect(await deliver(db(), mailer, id2, NOW)).toEqual({ outcome: 'done-before' });
    expect(inbox).toHaveLength(2);
  });

  it('SMTP down: the message stays PENDING and deliver throws; SMTP back: delivered once', async () => {
    const s = await setUp();
    const id = await message(s.inviteUuid);
    await stopSmtp();
    try {
      await expect(deliver(db(), mailer, id, NOW)).rejects.toThrow();
      const pending = await stored(id);
      expect(pending).toMatchObject({ status: 'PENDING', attempts: 1 });
      expect(pending?.error).toMatch(/ECONNREFUSED|connect/iu);
      expect(pending?.leaseUntil).toBeUndefined();
    } finally {
      await startSmtp();
    }
    expect(inbox).toHaveLength(0);
    expect(await deliver(db(), mailer, id, NOW)).toEqual({ outcome: 'sent' });
    expect(await deliver(db(), mailer, id, NOW)).toEqual({ outcome: 'done-before' });
    expect(inbox).toHaveLength(1);
    expect(await stored(id)).toMatchObject({ status: 'SENT', attempts: 2 });
  });

  it.each(['REVOKED', 'ACCEPTED', 'DECLINED'] as const)('does not mail an invite that is %s: FAILED, skipped', async (status) => {
    const s = await setUp({ status });
    const id = await message(s.inviteUuid);
    expect(await deliver(db(), mailer, id, NOW)).toEqual({ outcome: 'failed', reason: `skipped: the invite is ${status}` });
    expect(await stored(id)).toMatchObject({ status: 'FAILED', error: `skipped: the invite is ${status}` });
    expect(inbox).toHaveLength(0);
  });

  it('does not mail an expired invite, nor one that no longer exists', async () => {
    const s = await setUp({ expiresAt: '2026-03-02T09:59:59.999Z' });
    const id = await message(s.inviteUuid);
    expect(await deliver(db(), mailer, id, NOW)).toEqual({ outcome: 'failed', reason: 'skipped: the invite has expired' });
    const gone = await message(randomUUID());
    expect(await deliver(db(), mailer, gone, NOW)).toEqual({ outcome: 'failed', reason: 'skipped: the invite no longer exists' });
    expect(inbox).toHaveLength(0);
  });

  it('marks a message the mailer refuses (MailRefusedError) FAILED without throwing or sending', async () => {
    const s = await setUp({ email: 'Eve <eve@example.com>' });
    const id = await message(s.inviteUuid);
    const result = await deliver(db(), mailer, id, NOW);
    expect(result).toEqual({ outcome: 'failed', reason: 'refused: recipient is not one plain e-mail address' });
    expect(await stored(id)).toMatchObject({ status: 'FAILED', error: 'refused: recipient is not one plain e-mail address' });
    expect(await deliver(db(), mailer, id, NOW)).toEqual({ outcome: 'done-before' });
    expect(inbox).toHaveLength(0);
  });

  it('sends the decline notice to the inviter', async () => {
    const s = await setUp({ status: 'DECLINED' });
    const id = await message(s.inviteUuid, 'declined');
    expect(await deliver(db(), mailer, id, NOW)).toEqual({ outcome: 'sent' });
    expect(inbox).toHaveLength(1);
    expect(inbox[0]?.to).toEqual([s.inviterEmail]);
    expect(inbox[0]?.subject).toBe(`${s.email} declined your invitation to ${s.teamName}`);
  });

  it('waits for a live lease of another mailer, and takes over one that ran out', async () => {
    const s = await setUp();
    const live = await message(s.inviteUuid, 'invitation', { status: 'SENDING', leaseUntil: NOW.getTime() + 1000, attempts: 1 });
    await expect(deliver(db(), mailer, live, NOW)).rejects.toBeInstanceOf(LeasedError);
    expect(inbox).toHaveLength(0);
    expect(await deliver(db(), mailer, live, new Date(NOW.getTime() + 1001))).toEqual({ outcome: 'sent' });
    expect(await stored(live)).toMatchObject({ status: 'SENT', attempts: 2 });
    expect(inbox).toHaveLength(1);
  });

  it('finds nothing to do for a message that does not exist', async () => {
    expect(await deliver(db(), mailer, randomUUID(), NOW)).toEqual({ outcome: 'done-before' });
  });
});
