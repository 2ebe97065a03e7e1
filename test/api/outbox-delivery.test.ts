/**
 * lib/mail/outbox.ts and lib/mail/outbox-sweep.ts against DynamoDB Local, sending through the SMTP
 * transport to a real SMTP server (smtp-server) started in this process. Items are written through
 * the entities. A database outage is a real client pointed at a port nobody listens on.
 */
import { randomUUID } from 'node:crypto';
import type { Context, DynamoDBRecord } from 'aws-lambda';
import { seedAccountMessage, seedInvite, seedMessage, storedMessage } from '../helpers/outbox.ts';
import { type Received, testSmtp } from '../helpers/smtp.ts';
import { queuedEvent } from '../helpers/queued.ts';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { freePort } from '#infra/dynamodb-local.ts';
import { findToken } from '#lib/auth/account-tokens.ts';
import { config } from '#lib/core/config.ts';
import { createDocumentClient } from '#lib/db/client.ts';
import { statusComposites } from '#lib/db/entities/invites.ts';
import { OUTBOX_SHARDS } from '#lib/db/entities/outbox.ts';
import { createDb, type Db, db } from '#lib/db/service.ts';
import { lambdaContext } from '#lib/http/apigw.ts';
import { log } from '#lib/core/log.ts';
import { EVENT_METRICS } from '#lib/core/metric-names.ts';
import { inviteLink } from '#lib/mail/invitation.ts';
import { deliver } from '#lib/mail/outbox.ts';
import { type OutboxRef } from '#lib/mail/outbox-ref.ts';
import { sweepOutbox } from '#lib/mail/outbox-sweep.ts';
import { suppress } from '#lib/mail/suppression.ts';
import { type Mailer, smtpMailer } from '#lib/mail/transports.ts';

let port: number;

const { inbox, start: startSmtp, stop: stopSmtp } = testSmtp(() => port);

let mailer: ReturnType<typeof smtpMailer>;

beforeAll(async () => {
  port = await freePort();
  await startSmtp();
  mailer = smtpMailer({
    from: 'Roster <noreply@roster.example.com>',
    smtpUrl: `smtp://127.0.0.1:${port}`,
    smtpTimeoutMs: 2000,
    smtpSendTimeoutMs: 5000,
  });
});
afterAll(stopSmtp);
beforeEach(() => {
  inbox.length = 0;
});

const NOW = new Date('2026-03-02T10:00:00.000Z');
const iso = (d: Date) => d.toISOString();
const MINUTE = 60_000;
const setUp = (invite: Parameters<typeof seedInvite>[0] = {}) => seedInvite({ expiresAt: '2026-03-09T10:00:00.000Z', ...invite }, NOW);
const message = (inviteUuid: string, kind: 'invitation' | 'declined' = 'invitation', over: Record<string, unknown> = {}) =>
  seedMessage(inviteUuid, kind, { createdAt: iso(NOW), ...over });
const stored = storedMessage;

/** The item as DynamoDB holds it, index keys included. */
const raw = async ({ messageId }: OutboxRef) => {
  const params = db().entities.outboxMessage.get({ messageId }).params() as { TableName: string; Key: Record<string, string> };
  const { GetCommand } = await import('@aws-sdk/lib-dynamodb');
  return (await db().documents.send(new GetCommand({ ...params, ConsistentRead: true }))).Item;
};

/** The metrics (EMF lines) written while `work` runs, added up by name. */
const metricsOf = async (work: () => Promise<unknown>): Promise<(name: string) => number> => {
  const spy = vi.spyOn(process.stdout, 'write');
  try {
    await work();
    const lines = spy.mock.calls.map(([chunk]) => String(chunk)).filter((line) => line.includes('"_aws"'));
    return (name) => lines.reduce((sum, line) => sum + ((JSON.parse(line) as Record<string, number>)[name] ?? 0), 0);
  } finally {
    spy.mockRestore();
  }
};

/** An invite's status changed, as the API would change it (its index keys follow). */
const setStatus = async (inviteUuid: string, status: 'ACCEPTED' | 'REVOKED') => {
  const { data: i } = await db().entities.invite.get({ inviteUuid }).go({ consistent: true });
  if (!i) throw new Error(`no invite ${inviteUuid}`);
  await db().entities.invite.patch({ inviteUuid }).set({ status }).composite(statusComposites(i)).go();
};

/**
 * db() on its own client, whose requests go to a port nobody listens on while `down(command)` is
 * true: the outage that hits a mailer between its send and its SENT write, or one request kind.
 */
const withOutage = async (down: (command: string) => boolean): Promise<Db> => {
  const dead = await freePort();
  const client = createDocumentClient();
  client.middlewareStack.add(
    (next, context) => (args) => {
      if (down(context.commandName ?? '')) (args.request as { port?: number }).port = dead;
      return next(args);
    },
    { step: 'finalizeRequest' },
  );
  return createDb(client, config.tableName);
};

describe('deliver', () => {
  it('sends an invitation once: recipient, subject, link; the message becomes SENT and leaves gsi3', async () => {
    const s = await setUp();
    const m = await message(s.inviteUuid);
    expect(await raw(m)).toMatchObject({
      gsi3pk: expect.stringMatching(/^\$roster#dueshard_\d\d$/u),
      gsi3sk: `$outboxmessage_1#dueat_${iso(NOW).toLowerCase()}`,
    });
    expect(await deliver(db(), mailer, m, NOW)).toEqual({ outcome: 'sent' });
    expect(inbox).toHaveLength(1);
    const mail = inbox[0] as Received;
    expect(mail.to).toEqual([s.email]);
    expect(mail.subject).toBe(`Ann Lee invited you to join ${s.teamName} on Roster`);
    // The link carries a token made at the send: the invitee's, for this invite, until it expires.
    const link = new RegExp(`${inviteLink(s.inviteUuid).replace(/[.?]/gu, '\\$&')}\\?token=([A-Za-z0-9_-]{43})`, 'u');
    const token = link.exec(mail.text)?.[1] as string;
    expect(mail.html).toContain(`href="${inviteLink(s.inviteUuid)}?token=${token}"`);
    expect(await findToken(db(), token, ['invitation'], NOW)).toMatchObject({
      purpose: 'invitation',
      email: s.email,
      inviteUuid: s.inviteUuid,
      expiresAt: Date.parse('2026-03-09T10:00:00.000Z'),
    });
    await expect(findToken(db(), token, ['verification', 'recovery', 'email_change'], NOW)).rejects.toMatchObject({
      code: 'token_expired',
    });
    expect(mail.text).toContain('Admin');
    expect(mail.text).toContain('Monday, 9 March 2026, 10:00 UTC');
    expect(mail.messageId).toBe(`<${m.messageId}@roster.example.com>`);
    const after = await stored(m);
    expect(after).toMatchObject({ status: 'SENT', attempts: 1 });
    expect(after?.sentAt).toBeDefined();
    expect(after?.leaseUntil).toBeUndefined();
    expect(after?.maybeSent).toBeUndefined();
    const item = await raw(m);
    expect(item?.gsi3pk).toBeUndefined();
    expect(item?.dueAt).toBeUndefined();
  });

  it('counts the invitation sent and its lag from the message’s creation', async () => {
    const s = await setUp();
    const m = await message(s.inviteUuid);
    const metric = await metricsOf(() => deliver(db(), mailer, m, NOW));
    expect(metric(EVENT_METRICS.invitesSent)).toBe(1);
    expect(metric(EVENT_METRICS.outboxLag)).toBeGreaterThanOrEqual(Date.now() - NOW.getTime() - MINUTE);
  });

  it('sends once when the same message is delivered twice, one after the other or at the same time', async () => {
    const s = await setUp();
    const m = await message(s.inviteUuid);
    await deliver(db(), mailer, m, NOW);
    expect(await deliver(db(), mailer, m, NOW)).toEqual({ outcome: 'done-before' });
    expect(inbox).toHaveLength(1);

    const m2 = await message(s.inviteUuid);
    const both = await Promise.all([deliver(db(), mailer, m2, NOW), deliver(db(), mailer, m2, NOW)]);
    expect(both.filter((r) => r.outcome === 'sent')).toHaveLength(1);
    // The other saw it leased (nothing to retry: the holder finishes, or the sweeper takes over) or already SENT.
    expect(['leased', 'done-before']).toContain(both.find((r) => r.outcome !== 'sent')?.outcome);
    expect(inbox).toHaveLength(2);
    expect(await deliver(db(), mailer, m2, NOW)).toEqual({ outcome: 'done-before' });
    expect(inbox).toHaveLength(2);
  });

  it('SMTP down: the message is PENDING again, due now, and deliver throws; SMTP back: delivered once', async () => {
    const s = await setUp();
    const m = await message(s.inviteUuid);
    await stopSmtp();
    const before = Date.now();
    try {
      await expect(deliver(db(), mailer, m, NOW)).rejects.toThrow();
      const pending = await stored(m);
      expect(pending).toMatchObject({ status: 'PENDING', attempts: 1 });
      expect(pending?.error).toMatch(/ECONNREFUSED|connect/iu);
      expect(pending?.leaseUntil).toBeUndefined();
      expect(pending?.maybeSent).toBeUndefined();
      expect(Date.parse(pending?.dueAt ?? '')).toBeGreaterThanOrEqual(before);
    } finally {
      await startSmtp();
    }
    expect(inbox).toHaveLength(0);
    expect(await deliver(db(), mailer, m, NOW)).toEqual({ outcome: 'sent' });
    expect(await deliver(db(), mailer, m, NOW)).toEqual({ outcome: 'done-before' });
    expect(inbox).toHaveLength(1);
    expect(await stored(m)).toMatchObject({ status: 'SENT', attempts: 2 });
  });

  it.each(['REVOKED', 'ACCEPTED', 'DECLINED'] as const)(
    'does not mail an invite that is %s: FAILED, skipped, never claimed',
    async (status) => {
      const s = await setUp({ status });
      const m = await message(s.inviteUuid);
      expect(await deliver(db(), mailer, m, NOW)).toEqual({ outcome: 'failed', reason: `skipped: the invite is ${status}` });
      const after = await stored(m);
      expect(after).toMatchObject({ status: 'FAILED', error: `skipped: the invite is ${status}` });
      expect(after?.attempts).toBeUndefined();
      expect((await raw(m))?.gsi3pk).toBeUndefined();
      expect(inbox).toHaveLength(0);
    },
  );

  it('does not mail an expired invite, nor one that no longer exists', async () => {
    const s = await setUp({ expiresAt: '2026-03-02T09:59:59.999Z' });
    const m = await message(s.inviteUuid);
    expect(await deliver(db(), mailer, m, NOW)).toEqual({ outcome: 'failed', reason: 'skipped: the invite has expired' });
    const gone = await message(randomUUID());
    expect(await deliver(db(), mailer, gone, NOW)).toEqual({ outcome: 'failed', reason: 'skipped: the invite no longer exists' });
    expect(inbox).toHaveLength(0);
  });

  it('marks a message the transport would refuse FAILED without claiming, sending or throwing', async () => {
    const s = await setUp({ email: 'Eve <eve@example.com>' });
    const m = await message(s.inviteUuid);
    const result = await deliver(db(), mailer, m, NOW);
    expect(result).toEqual({ outcome: 'failed', reason: 'refused: recipient is not one plain e-mail address' });
    expect(await stored(m)).toMatchObject({ status: 'FAILED', error: 'refused: recipient is not one plain e-mail address' });
    expect(await deliver(db(), mailer, m, NOW)).toEqual({ outcome: 'done-before' });
    expect(inbox).toHaveLength(0);
  });

  it('does not mail a suppressed address: FAILED, skipped, counted', async () => {
    const s = await setUp();
    await suppress(db(), { email: s.email.toUpperCase(), reason: 'bounce', detail: 'Permanent/General', at: iso(NOW) });
    const m = await message(s.inviteUuid);
    let result;
    const metric = await metricsOf(async () => {
      result = await deliver(db(), mailer, m, NOW);
    });
    expect(result).toEqual({ outcome: 'failed', reason: 'skipped: suppressed address' });
    expect(metric(EVENT_METRICS.mailSuppressed)).toBe(1);
    expect(await stored(m)).toMatchObject({ status: 'FAILED', error: 'skipped: suppressed address' });
    expect(inbox).toHaveLength(0);
  });

  it('sends the decline notice to the inviter', async () => {
    const s = await setUp({ status: 'DECLINED' });
    const m = await message(s.inviteUuid, 'declined');
    expect(await deliver(db(), mailer, m, NOW)).toEqual({ outcome: 'sent' });
    expect(inbox).toHaveLength(1);
    expect(inbox[0]?.to).toEqual([s.inviterEmail]);
    expect(inbox[0]?.subject).toBe(`${s.email} declined your invitation to ${s.teamName}`);
  });

  it('leaves a live lease of another mailer alone, and takes over one that ran out (maybe sent: flagged)', async () => {
    const s = await setUp();
    const lease = NOW.getTime() + 1000;
    const live = await message(s.inviteUuid, 'invitation', {
      status: 'SENDING',
      leaseUntil: lease,
      dueAt: iso(new Date(lease)),
      attempts: 1,
    });
    expect(await deliver(db(), mailer, live, NOW)).toEqual({ outcome: 'leased' });
    expect(inbox).toHaveLength(0);
    expect(await deliver(db(), mailer, live, new Date(lease + 1))).toEqual({ outcome: 'sent' });
    expect(await stored(live)).toMatchObject({ status: 'SENT', attempts: 2, maybeSent: true });
    expect(inbox).toHaveLength(1);
  });

  it('a token that cannot be stored is released like a failed send: PENDING again, nothing sent, deliver throws', async () => {
    const s = await setUp();
    const m = await message(s.inviteUuid);
    const noPuts = await withOutage((command) => command === 'PutItemCommand');
    await expect(deliver(noPuts, mailer, m, NOW)).rejects.toThrow();
    expect(await stored(m)).toMatchObject({ status: 'PENDING', attempts: 1, error: expect.any(String) });
    expect(inbox).toHaveLength(0);
    expect(await deliver(db(), mailer, m, NOW)).toEqual({ outcome: 'sent' });
    expect(inbox).toHaveLength(1);
  });

  it('does not start a send that could outlive its claim: released PENDING, nothing sent, deliver throws', async () => {
    const s = await setUp();
    const m = await message(s.inviteUuid);
    const slow: Mailer = { kind: 'smtp', maxSendMs: 20_000, send: () => Promise.reject(new Error('must not be called')) };
    await expect(deliver(db(), slow, m, NOW, { leaseMs: 20_000 })).rejects.toThrow('too little time left to send');
    expect(await stored(m)).toMatchObject({ status: 'PENDING', attempts: 1, error: expect.stringContaining('too little time left') });
    // With the lease to spare, it goes.
    expect(await deliver(db(), mailer, m, NOW, { leaseMs: mailer.maxSendMs + 5000 })).toEqual({ outcome: 'sent' });
    expect(inbox).toHaveLength(1);
  });

  it('every send makes its own token: a new message, and one taken over after its lease', async () => {
    const s = await setUp();
    const lease = NOW.getTime() - 1;
    const first = await message(s.inviteUuid);
    const again = await message(s.inviteUuid, 'invitation', {
      status: 'SENDING',
      leaseUntil: lease,
      dueAt: iso(new Date(lease)),
      attempts: 1,
    });
    await deliver(db(), mailer, first, NOW);
    await deliver(db(), mailer, again, NOW);
    const tokens = inbox.map((mail) => /\?token=([A-Za-z0-9_-]+)/u.exec(mail.text)?.[1] as string);
    expect(new Set(tokens).size).toBe(2);
    for (const token of tokens) expect((await findToken(db(), token, ['invitation'], NOW)).inviteUuid).toBe(s.inviteUuid);
  });

  it('finds nothing to do for a message that does not exist', async () => {
    const s = await setUp();
    expect(
      await deliver(db(), mailer, { messageId: randomUUID(), kind: 'invitation', inviteUuid: s.inviteUuid, createdAt: iso(NOW) }, NOW),
    ).toEqual({
      outcome: 'done-before',
    });
  });
});

describe('deliver when the SENT write fails (at-least-once)', () => {
  /** A mailer that sends for real, then takes the database away. */
  const outage = async () => {
    let down = false;
    const flaky: Mailer = { kind: 'smtp', maxSendMs: mailer.maxSendMs, send: async (m) => mailer.send(m).then(() => void (down = true)) };
    return { db: await withOutage(() => down), mailer: flaky, restore: () => void (down = false) };
  };

  it('reports it, keeps the message SENDING (never FAILED), and the next attempt after the lease sends it again', async () => {
    const s = await setUp();
    const m = await message(s.inviteUuid);
    const o = await outage();
    const errors = vi.spyOn(log, 'error');
    const result = await deliver(o.db, o.mailer, m, NOW, { deadline: Date.now() + 1500 });
    expect(result).toEqual({ outcome: 'sent-unrecorded' });
    expect(errors.mock.calls.filter(([text]) => text.startsWith('outbox message sent, but SENT was not recorded'))).toHaveLength(1);
    errors.mockRestore();
    const after = await stored(m);
    expect(after?.status).toBe('SENDING');
    // In gsi3 from its lease's end: the sweeper takes it then.
    expect(after?.dueAt).toBe(iso(new Date(after?.leaseUntil ?? 0)));
    expect(inbox).toHaveLength(1);

    // The lease has run out: the one duplicate at-least-once allows, recorded as such.
    const later = new Date((after?.leaseUntil ?? 0) + 1);
    expect(await deliver(db(), mailer, m, later)).toEqual({ outcome: 'sent' });
    expect(inbox).toHaveLength(2);
    expect(inbox[0]?.messageId).toBe(inbox[1]?.messageId);
    expect(await stored(m)).toMatchObject({ status: 'SENT', attempts: 2, maybeSent: true });
  });

  it('a message that may have been sent is never FAILED: skipped later, it ends SENT marked unconfirmed', async () => {
    const s = await setUp();
    const m = await message(s.inviteUuid);
    const o = await outage();
    expect(await deliver(o.db, o.mailer, m, NOW, { deadline: Date.now() + 500 })).toEqual({ outcome: 'sent-unrecorded' });
    // The invitee accepted from that e-mail; then the lease ran out.
    await setStatus(s.inviteUuid, 'ACCEPTED');
    const later = new Date(NOW.getTime() + config.outboxLeaseMs + 1);
    const result = await deliver(db(), mailer, m, later);
    expect(result).toEqual({
      outcome: 'unconfirmed',
      reason: 'unconfirmed: an earlier attempt may have sent it; not sent again: skipped: the invite is ACCEPTED',
    });
    const after = await stored(m);
    expect(after).toMatchObject({ status: 'SENT', maybeSent: true, error: expect.stringMatching(/^unconfirmed: /u) });
    expect(after?.sentAt).toBeUndefined();
    expect(inbox).toHaveLength(1);
  });

  it('keeps the flag through a failed send, so a later skip still does not say FAILED', async () => {
    const s = await setUp();
    const lease = NOW.getTime() - 1;
    const m = await message(s.inviteUuid, 'invitation', { status: 'SENDING', leaseUntil: lease, dueAt: iso(new Date(lease)), attempts: 1 });
    await stopSmtp();
    try {
      await expect(deliver(db(), mailer, m, NOW)).rejects.toThrow();
    } finally {
      await startSmtp();
    }
    expect(await stored(m)).toMatchObject({ status: 'PENDING', maybeSent: true, attempts: 2 });
    await setStatus(s.inviteUuid, 'REVOKED');
    expect((await deliver(db(), mailer, m, NOW)).outcome).toBe('unconfirmed');
    expect(await stored(m)).toMatchObject({ status: 'SENT', maybeSent: true });
  });
});

describe('the mailer function', () => {
  const record = (m: Record<string, string | number>, sequenceNumber: string) => ({
    eventName: 'INSERT',
    dynamodb: {
      SequenceNumber: sequenceNumber,
      NewImage: {
        __edb_e__: { S: 'outboxMessage' },
        ...Object.fromEntries(Object.entries(m).map(([k, v]) => [k, typeof v === 'number' ? { N: String(v) } : { S: v }])),
        status: { S: 'PENDING' },
      },
    },
  });

  it('reads every kind from the stream image, and nothing that lacks what its kind needs', async () => {
    const { outboxMessageOf } = await import('#functions/mailer.ts');
    const base = { messageId: 'm1', createdAt: iso(NOW) };
    const of = (m: Record<string, string | number>) => outboxMessageOf(record(m, '1') as DynamoDBRecord);
    for (const kind of ['invitation', 'declined'] as const)
      expect(of({ ...base, kind, inviteUuid: 'i1' })).toEqual({ ...base, kind, inviteUuid: 'i1' });
    for (const kind of ['verification', 'email_change', 'email_change_notice'] as const) {
      expect(of({ ...base, kind, userUuid: 'u1', address: 'a@example.com' })).toEqual({
        ...base,
        kind,
        userUuid: 'u1',
        address: 'a@example.com',
      });
      expect(of({ ...base, kind, address: 'a@example.com' })).toBeUndefined();
    }
    expect(of({ ...base, kind: 'recovery', address: 'a@example.com' })).toEqual({ ...base, kind: 'recovery', address: 'a@example.com' });
    expect(of({ ...base, kind: 'recovery', userUuid: 'u1' })).toBeUndefined();
    expect(of({ ...base, kind: 'invitation', userUuid: 'u1', address: 'a@example.com' })).toBeUndefined();
    expect(of({ ...base, kind: 'telegram', inviteUuid: 'i1' })).toBeUndefined();
    expect(of({ ...base, kind: 'transfer', teamId: 42, transferId: 't1' })).toEqual({
      ...base,
      kind: 'transfer',
      teamId: 42,
      transferId: 't1',
    });
    expect(of({ ...base, kind: 'transfer', transferId: 't1' })).toBeUndefined();
  });

  it('hands back a message another mailer holds, and sends the others of the batch', async () => {
    const { handler } = await import('#functions/mailer.ts');
    const s = await setUp({ expiresAt: iso(new Date(Date.now() + 7 * 24 * 60 * MINUTE)) });
    const lease = Date.now() + MINUTE;
    const held = await message(s.inviteUuid, 'invitation', {
      status: 'SENDING',
      leaseUntil: lease,
      dueAt: iso(new Date(lease)),
      attempts: 1,
    });
    const free = await message(s.inviteUuid);
    const event = queuedEvent([record(held, '1'), record(free, '2')]);
    const context: Context = lambdaContext('roster-mailer', 10_000, 'test');
    // Reported failed, so its queue hands it back in seconds: by then the holder has settled it, or its lease has run out.
    expect(await handler(event, context)).toEqual({ batchItemFailures: [{ itemIdentifier: event.Records[0]?.messageId }] });
    expect((await stored(held))?.status).toBe('SENDING');
    expect((await stored(free))?.status).toBe('SENT');
    await db().entities.outboxMessage.delete({ messageId: held.messageId }).go();
  });
});

describe('sweepOutbox', () => {
  const GRACE = 30_000;
  const live = () => iso(new Date(Date.now() + 7 * 24 * 60 * MINUTE));
  const ago = (ms: number) => iso(new Date(Date.now() - ms));
  let made: Pick<OutboxRef, 'messageId'>[] = [];
  /** A message of a live invite, remembered so that it is removed after the test. */
  const due = async (over: Record<string, unknown> = {}) => {
    const s = await setUp({ expiresAt: live() });
    const m = await message(s.inviteUuid, 'invitation', { createdAt: ago(10 * MINUTE), ...over });
    made.push(m);
    return m;
  };
  afterEach(async () => {
    await Promise.all(made.map(({ messageId }) => db().entities.outboxMessage.delete({ messageId }).go()));
    made = [];
  });

  /** db() on a client that records each DynamoDB operation it sends. */
  const observed = () => {
    const client = createDocumentClient();
    const operations: string[] = [];
    client.middlewareStack.add(
      (next, context) => (args) => {
        operations.push((context.commandName ?? '').replace(/Command$/u, ''));
        return next(args);
      },
      { step: 'initialize' },
    );
    return { db: createDb(client, config.tableName), operations };
  };

  it('delivers what is left PENDING or SENDING past its lease, and nothing else; Query, GetItem, PutItem (the tokens) and UpdateItem only', async () => {
    const stuck = await due();
    const expiredLease = Date.now() - 5 * MINUTE;
    const abandoned = await due({ status: 'SENDING', leaseUntil: expiredLease, dueAt: iso(new Date(expiredLease)), attempts: 1 });
    const fresh = await due({ createdAt: ago(1000) });
    const liveLease = Date.now() + MINUTE;
    const held = await due({ status: 'SENDING', leaseUntil: liveLease, dueAt: iso(new Date(liveLease)), attempts: 1 });
    const done = await due({ status: 'SENT', sentAt: ago(9 * MINUTE) });
    const { db: watched, operations } = observed();
    const seen: string[] = [];
    let result;
    const metric = await metricsOf(async () => {
      result = await sweepOutbox(watched, mailer, new Date(), {
        olderThanMs: GRACE,
        mayGoOn: () => true,
        onMessage: (m) => seen.push(m.messageId),
      });
    });
    expect(seen.sort()).toEqual([stuck.messageId, abandoned.messageId].sort());
    expect(result).toMatchObject({ found: 2, queries: OUTBOX_SHARDS, caughtUp: true });
    expect(metric(EVENT_METRICS.outboxRedelivered)).toBe(2);
    expect(new Set(operations)).toEqual(new Set(['Query', 'GetItem', 'PutItem', 'UpdateItem']));
    expect(inbox.map((m) => m.messageId).sort()).toEqual([stuck, abandoned].map((m) => `<${m.messageId}@roster.example.com>`).sort());
    expect(await stored(stuck)).toMatchObject({ status: 'SENT', attempts: 1 });
    expect(await stored(abandoned)).toMatchObject({ status: 'SENT', attempts: 2, maybeSent: true });
    expect((await stored(fresh))?.status).toBe('PENDING');
    expect((await stored(held))?.status).toBe('SENDING');
    expect((await stored(done))?.status).toBe('SENT');
    // Caught up: a second run finds nothing, one Query per shard.
    expect(await sweepOutbox(db(), mailer, new Date(), { olderThanMs: GRACE, mayGoOn: () => true })).toMatchObject({
      found: 0,
      queries: OUTBOX_SHARDS,
    });
  });

  it('reports a message that lacks what its kind needs as an error, and leaves it', async () => {
    const address = `nobody-${randomUUID()}@example.com`;
    const m = await seedAccountMessage({ kind: 'recovery', address }, { createdAt: ago(10 * MINUTE) });
    made.push(m);
    // As only a bug would write it: a verification without its account.
    const broken = { messageId: randomUUID(), kind: 'verification' as const, address, createdAt: m.createdAt };
    await db()
      .entities.outboxMessage.create({ ...broken, status: 'PENDING' })
      .go();
    made.push(broken);
    const errors = vi.spyOn(log, 'error');
    const outcomes: Record<string, string> = {};
    await sweepOutbox(db(), mailer, new Date(), {
      olderThanMs: GRACE,
      mayGoOn: () => true,
      onMessage: (d, r) => (outcomes[d.messageId] = 'error' in r ? String(r.error) : r.delivery.outcome),
    });
    expect(outcomes).toEqual({
      [m.messageId]: 'failed',
      [broken.messageId]: 'Error: outbox message of kind verification lacks the attributes of its kind',
    });
    expect(errors).toHaveBeenCalled();
    errors.mockRestore();
    expect((await stored(broken))?.status).toBe('PENDING');
    expect(await stored(m)).toMatchObject({ status: 'FAILED', error: 'skipped: no account has this address' });
  });

  it('stops when its time is up, and the next run goes on; pages through a backlog, oldest first', async () => {
    const backlog = [];
    for (let i = 0; i < 23; i++) backlog.push(await due({ dueShard: '03', createdAt: ago((30 - i) * MINUTE) }));
    let pages = 0;
    const first = await sweepOutbox(db(), mailer, new Date(), { olderThanMs: GRACE, mayGoOn: () => pages++ < 4 });
    // Shards 00–03: one page each; 03's first page holds the ten oldest.
    expect(first).toMatchObject({ found: 10, queries: 4, caughtUp: false });
    const sent = new Set(inbox.map((m) => m.messageId));
    expect(backlog.slice(0, 10).every((m) => sent.has(`<${m.messageId}@roster.example.com>`))).toBe(true);
    const rest = await sweepOutbox(db(), mailer, new Date(), { olderThanMs: GRACE, mayGoOn: () => true });
    expect(rest).toMatchObject({ found: 13, queries: OUTBOX_SHARDS + 1, caughtUp: true });
    expect(inbox).toHaveLength(23);
  });

  it('a send that fails is released due now: not tried again in the same run, and the run goes on', async () => {
    const m = await due();
    await stopSmtp();
    let result;
    try {
      result = await sweepOutbox(db(), mailer, new Date(), { olderThanMs: GRACE, mayGoOn: () => true });
    } finally {
      await startSmtp();
    }
    expect(result).toMatchObject({ found: 1, caughtUp: true, outcomes: { error: 1 } });
    const after = await stored(m);
    expect(after).toMatchObject({ status: 'PENDING', attempts: 1 });
    // Due again from the release: a grace period later, not before.
    expect(await sweepOutbox(db(), mailer, new Date(), { olderThanMs: GRACE, mayGoOn: () => true })).toMatchObject({ found: 0 });
    expect(await sweepOutbox(db(), mailer, new Date(Date.now() + GRACE), { olderThanMs: GRACE, mayGoOn: () => true })).toMatchObject({
      found: 1,
    });
    expect(inbox).toHaveLength(1);
  });

  it('sends each message once with two sweeps and the stream’s mailer at it at the same time', async () => {
    const messages = [];
    for (let i = 0; i < 12; i++) messages.push(await due());
    const sweep = () => sweepOutbox(db(), mailer, new Date(), { olderThanMs: GRACE, mayGoOn: () => true });
    await Promise.all([sweep(), sweep(), ...messages.map((m) => deliver(db(), mailer, m))]);
    expect(inbox).toHaveLength(12);
    expect(new Set(inbox.map((m) => m.messageId)).size).toBe(12);
    for (const m of messages) expect((await stored(m))?.status).toBe('SENT');
  });
});
