/** lib/mail/suppression.ts and functions/mail-events.ts against DynamoDB Local: SES events fed as SNS events through the handler. */
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createDocumentClient } from '#lib/db/client.ts';
import { mailSuppression } from '#lib/db/entities/mail.ts';
import { createDb, db } from '#lib/db/service.ts';
import { EVENT_METRICS } from '#lib/core/metric-names.ts';
import { applySesEvent, isSuppressed, maskAddress, suppress } from '#lib/mail/suppression.ts';
import { handler } from '#functions/mail-events.ts';
import { address, bounceRecord, captured, complaintRecord, deliveryRecord, snsEvent } from '../helpers/ses-events.ts';

describe('suppress and isSuppressed (DynamoDB Local)', () => {
  it('the entity passes ElectroDB’s model check', () => {
    expect(() => mailSuppression()).not.toThrow();
  });

  it('suppresses an address whatever its case; others are not', async () => {
    const email = address();
    expect(await isSuppressed(db(), email)).toBe(false);
    await suppress(db(), { email: email.toUpperCase(), reason: 'bounce', detail: 'Permanent/General', at: '2026-01-01T00:00:00.000Z' });
    expect(await isSuppressed(db(), email)).toBe(true);
    expect(await isSuppressed(db(), ` ${email.toUpperCase()} `)).toBe(true);
    expect(await isSuppressed(db(), address())).toBe(false);
  });

  it('is idempotent and order-proof: the latest event is kept, `since` is the first', async () => {
    const email = address();
    const bounce = { email, reason: 'bounce', detail: 'Permanent/General', at: '2026-01-01T00:00:00.000Z' } as const;
    const complaint = { email, reason: 'complaint', detail: 'complaint/abuse', at: '2026-01-02T00:00:00.000Z' } as const;
    await suppress(db(), bounce);
    await suppress(db(), bounce);
    await suppress(db(), complaint);
    // A redelivered older event changes nothing.
    await suppress(db(), bounce);
    const item = (await db().entities.mailSuppression.get({ email }).go({ consistent: true })).data;
    expect(item).toEqual({ email, reason: 'complaint', detail: 'complaint/abuse', at: complaint.at, since: bounce.at });
  });

  it('the same events at the same time leave one item', async () => {
    const email = address();
    await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        suppress(db(), { email, reason: 'bounce', detail: `Permanent/General ${i}`, at: `2026-01-01T00:00:0${i}.000Z` }),
      ),
    );
    const item = (await db().entities.mailSuppression.get({ email }).go({ consistent: true })).data;
    expect(item).toMatchObject({
      at: '2026-01-01T00:00:09.000Z',
      detail: 'Permanent/General 9',
      since: expect.stringMatching(/^2026-01-01T00:00:0\d\.000Z$/),
    });
  });
});

describe('functions/mail-events.ts', () => {
  let out: ReturnType<typeof captured>;
  beforeEach(() => {
    out = captured();
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('suppresses a permanently bounced address, counts it, and logs it masked', async () => {
    const email = address('bounced');
    await handler(snsEvent(bounceRecord(email)));
    expect(await isSuppressed(db(), email)).toBe(true);
    expect(out.metric(EVENT_METRICS.mailBounced)).toBe(1);
    expect(out.metric(EVENT_METRICS.mailComplained)).toBe(0);
    const line = out.lines.find((l) => l.message === 'mail address suppressed');
    expect(line).toMatchObject({
      reason: 'bounce',
      detail: 'Permanent/General: smtp; 550 5.1.1 user unknown',
      ...maskAddress(email),
      snsMessageId: expect.any(String),
    });
    expect(JSON.stringify(out.lines)).not.toContain(email);
  });

  it('suppresses complained addresses, one metric per recipient', async () => {
    const [a, b] = [address('complained'), address('complained')];
    const record = complaintRecord(a);
    record.complaint.complainedRecipients.push({ emailAddress: b });
    await handler(snsEvent(record));
    expect([await isSuppressed(db(), a), await isSuppressed(db(), b)]).toEqual([true, true]);
    expect(out.metric(EVENT_METRICS.mailComplained)).toBe(2);
  });

  it('counts transient and undetermined bounces without suppressing', async () => {
    const [soft, unknown] = [address('soft'), address('unknown')];
    await handler(
      snsEvent(
        bounceRecord(soft, { bounceType: 'Transient', bounceSubType: 'MailboxFull' }),
        bounceRecord(unknown, { bounceType: 'Undetermined', bounceSubType: 'Undetermined' }),
      ),
    );
    expect([await isSuppressed(db(), soft), await isSuppressed(db(), unknown)]).toEqual([false, false]);
    expect(out.metric(EVENT_METRICS.mailBounced)).toBe(2);
    expect(out.lines.filter((l) => l.message === 'mail event, address not suppressed')).toHaveLength(2);
  });

  it('logs a quoted address in a diagnostic code by its domain only', async () => {
    const email = address('quoted');
    const record = bounceRecord(email);
    (record.bounce.bouncedRecipients[0] as { diagnosticCode: string }).diagnosticCode = `smtp; 550 5.1.1 <${email}>... User`;
    await handler(snsEvent(record));
    expect(out.lines.find((l) => l.message === 'mail address suppressed')?.detail).toBe(
      'Permanent/General: smtp; 550 5.1.1 <…@example.com>... User',
    );
    expect(JSON.stringify(out.lines)).not.toContain(email);
    // The item keeps what SES said, for the operator.
    expect((await db().entities.mailSuppression.get({ email }).go()).data?.detail).toContain(email);
  });

  it('drops a malformed message with an error line, goes on with the rest, and does not throw', async () => {
    const email = address('after-junk');
    await expect(
      handler(snsEvent('{"eventType":"Bounce"', { eventType: 'Bounce', bounce: {} }, bounceRecord(email))),
    ).resolves.toBeUndefined();
    const dropped = out.lines.filter((l) => l.message === 'SES event dropped: malformed');
    expect(dropped).toHaveLength(2);
    expect(dropped[0]).toMatchObject({ detail: 'not JSON', snsMessageId: expect.any(String), topicArn: expect.any(String) });
    expect(await isSuppressed(db(), email)).toBe(true);
  });

  it('writes nothing for other event types', async () => {
    const email = address('delivered');
    await handler(snsEvent(deliveryRecord(email)));
    expect(await isSuppressed(db(), email)).toBe(false);
    expect(out.lines).toEqual([]);
  });

  it('a message delivered twice suppresses once and changes nothing the second time', async () => {
    const email = address('twice');
    const event = snsEvent(bounceRecord(email));
    await handler(event);
    const first = (await db().entities.mailSuppression.get({ email }).go({ consistent: true })).data;
    await handler(event);
    expect((await db().entities.mailSuppression.get({ email }).go({ consistent: true })).data).toEqual(first);
  });

  it('throws when DynamoDB fails (Lambda retries the invocation), before counting anything', async () => {
    const broken = createDb(createDocumentClient(), `no-such-table-${randomUUID()}`);
    await expect(applySesEvent(broken, JSON.stringify(bounceRecord(address())))).rejects.toThrow();
    expect(out.metric(EVENT_METRICS.mailBounced)).toBe(0);
  });
});
