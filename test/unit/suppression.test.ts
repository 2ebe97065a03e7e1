/**
 * lib/mail/suppression.ts and functions/mail-events.ts: SES event records as SES publishes them to
 * SNS (the samples follow the SES developer guide's "Examples of event data that Amazon SES
 * publishes to Amazon SNS"), parsed, then fed as SNS events through the handler against DynamoDB
 * Local.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { SNSEvent } from 'aws-lambda';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createDocumentClient } from '../../lib/db/client.ts';
import { mailSuppression } from '../../lib/db/entities/mail.ts';
import { createDb, db } from '../../lib/db/service.ts';
import { EVENT_METRICS } from '../../lib/metric-names.ts';
import { applySesEvent, isSuppressed, maskAddress, parseSesEvent, suppress } from '../../lib/mail/suppression.ts';
import { handler } from '../../functions/mail-events.ts';

let n = 0;
const address = (name = 'rcpt') => `${name}-${Date.now().toString(36)}-${++n}@example.com`;

const mail = (to: string) => ({
  timestamp: '2017-08-05T00:40:02.012Z',
  source: 'Sender Name <sender@example.com>',
  sourceArn: 'arn:aws:ses:us-east-1:123456789012:identity/sender@example.com',
  sendingAccountId: '123456789012',
  messageId: 'EXAMPLE7c191be45-e9aedb9a-02f9-4d12-a87d-dd0099a07f8a-000000',
  destination: [to],
  headersTruncated: false,
  headers: [
    { name: 'From', value: 'Sender Name <sender@example.com>' },
    { name: 'To', value: to },
    { name: 'Subject', value: 'Message sent from Amazon SES' },
  ],
  commonHeaders: {
    from: ['Sender Name <sender@example.com>'],
    to: [to],
    messageId: 'EXAMPLE7c191be45',
    subject: 'Message sent from Amazon SES',
  },
  tags: { 'ses:configuration-set': ['ConfigSet'], 'ses:source-ip': ['192.0.2.0'] },
});

/** The guide's Bounce record: a permanent, general bounce with a DSN. */
const bounceRecord = (
  to: string,
  { bounceType = 'Permanent', bounceSubType = 'General', timestamp = '2017-08-05T00:41:02.669Z' } = {},
) => ({
  eventType: 'Bounce',
  bounce: {
    bounceType,
    bounceSubType,
    bouncedRecipients: [{ emailAddress: to, action: 'failed', status: '5.1.1', diagnosticCode: 'smtp; 550 5.1.1 user unknown' }],
    timestamp,
    feedbackId: '01000157c44f053b-61b59c11-9236-11e6-8f96-7be8aexample-000000',
    reportingMTA: 'dsn; mta.example.com',
  },
  mail: mail(to),
});

/** The guide's Complaint record. */
const complaintRecord = (to: string, extra: Record<string, unknown> = {}) => ({
  eventType: 'Complaint',
  complaint: {
    complainedRecipients: [{ emailAddress: to }],
    timestamp: '2017-08-05T00:41:02.669Z',
    feedbackId: '01000157c44f053b-61b59c11-9236-11e6-8f96-7be8aexample-000000',
    userAgent: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/60.0.3112.90 Safari/537.36',
    complaintFeedbackType: 'abuse',
    arrivalDate: '2017-08-05T00:41:02.669Z',
    ...extra,
  },
  mail: mail(to),
});

/** The guide's Delivery record (not acted on). */
const deliveryRecord = (to: string) => ({
  eventType: 'Delivery',
  mail: mail(to),
  delivery: {
    timestamp: '2016-10-19T23:21:04.133Z',
    processingTimeMillis: 11893,
    recipients: [to],
    smtpResponse: '250 2.6.0 Message received',
    reportingMTA: 'mta.example.com',
  },
});

/** What SNS hands a subscribed Lambda function: one record whose Message is the SES record's JSON. */
const snsEvent = (...messages: unknown[]): SNSEvent => ({
  Records: messages.map((message) => ({
    EventSource: 'aws:sns',
    EventVersion: '1.0',
    EventSubscriptionArn: 'arn:aws:sns:us-east-1:123456789012:ses-events:2bcfbf39-05c3-41de-beaa-fcfcc21c8f55',
    Sns: {
      Type: 'Notification',
      MessageId: randomUUID(),
      TopicArn: 'arn:aws:sns:us-east-1:123456789012:ses-events',
      Subject: null as unknown as string,
      Message: typeof message === 'string' ? message : JSON.stringify(message),
      Timestamp: '2017-08-05T00:41:03.000Z',
      SignatureVersion: '1',
      Signature: 'EXAMPLE',
      SigningCertUrl: 'https://sns.us-east-1.amazonaws.com/SimpleNotificationService-EXAMPLE.pem',
      UnsubscribeUrl: 'https://sns.us-east-1.amazonaws.com/?Action=Unsubscribe',
      MessageAttributes: {},
    },
  })),
});

/** The JSON lines (logs and EMF metrics) written to stdout and stderr from now on. */
const captured = () => {
  const lines: Record<string, unknown>[] = [];
  const take = (chunk: unknown) => {
    for (const line of String(chunk).split('\n')) if (line.startsWith('{')) lines.push(JSON.parse(line) as Record<string, unknown>);
    return true;
  };
  vi.spyOn(process.stdout, 'write').mockImplementation(take);
  vi.spyOn(process.stderr, 'write').mockImplementation(take);
  return {
    lines,
    metric: (name: string) => lines.filter((l) => name in l && '_aws' in l).reduce((sum, l) => sum + (l[name] as number), 0),
  };
};

describe('parseSesEvent', () => {
  it('reads a permanent bounce: the address lowercased, what SES said kept, the address suppressed', () => {
    expect(parseSesEvent(JSON.stringify(bounceRecord(' Recipient@Example.COM ')))).toEqual({
      kind: 'feedback',
      eventType: 'Bounce',
      feedback: [
        {
          email: 'recipient@example.com',
          reason: 'bounce',
          detail: 'Permanent/General: smtp; 550 5.1.1 user unknown',
          at: '2017-08-05T00:41:02.669Z',
          suppresses: true,
        },
      ],
    });
  });

  it.each([
    ['Permanent', 'General', true],
    ['Permanent', 'NoEmail', true],
    ['Permanent', 'Suppressed', true],
    ['Permanent', 'OnAccountSuppressionList', true],
    ['Transient', 'MailboxFull', false],
    ['Transient', 'General', false],
    ['Undetermined', 'Undetermined', false],
  ])('a %s/%s bounce suppresses: %s', (bounceType, bounceSubType, suppresses) => {
    const event = parseSesEvent(JSON.stringify(bounceRecord('a@example.com', { bounceType, bounceSubType })));
    expect(event).toMatchObject({
      kind: 'feedback',
      feedback: [{ suppresses, detail: expect.stringMatching(`^${bounceType}/${bounceSubType}`) }],
    });
  });

  it('reads every recipient of a bounce, and one without a diagnostic code', () => {
    const record = bounceRecord('a@example.com');
    record.bounce.bouncedRecipients.push({ emailAddress: 'B@example.com' } as never);
    const event = parseSesEvent(JSON.stringify(record));
    expect(event.kind === 'feedback' && event.feedback.map((f) => [f.email, f.detail])).toEqual([
      ['a@example.com', 'Permanent/General: smtp; 550 5.1.1 user unknown'],
      ['b@example.com', 'Permanent/General'],
    ]);
  });

  it('reads a complaint: suppresses, except feedback type not-spam', () => {
    expect(parseSesEvent(JSON.stringify(complaintRecord('Spam.Hater@example.com')))).toEqual({
      kind: 'feedback',
      eventType: 'Complaint',
      feedback: [
        {
          email: 'spam.hater@example.com',
          reason: 'complaint',
          detail: 'complaint/abuse',
          at: '2017-08-05T00:41:02.669Z',
          suppresses: true,
        },
      ],
    });
    const notSpam = parseSesEvent(JSON.stringify(complaintRecord('a@example.com', { complaintFeedbackType: 'not-spam' })));
    expect(notSpam).toMatchObject({ kind: 'feedback', feedback: [{ suppresses: false, detail: 'complaint/not-spam' }] });
    const noType = {
      ...complaintRecord('a@example.com'),
      complaint: { complainedRecipients: [{ emailAddress: 'a@example.com' }], timestamp: '2017-08-05T00:41:02.669Z' },
    };
    expect(parseSesEvent(JSON.stringify(noType))).toMatchObject({
      kind: 'feedback',
      feedback: [{ suppresses: true, detail: 'complaint/unspecified' }],
    });
    const onList = parseSesEvent(JSON.stringify(complaintRecord('a@example.com', { complaintSubType: 'OnAccountSuppressionList' })));
    expect(onList).toMatchObject({
      kind: 'feedback',
      feedback: [{ suppresses: true, detail: 'complaint/abuse OnAccountSuppressionList' }],
    });
  });

  it('reads the identity notifications too (notificationType instead of eventType)', () => {
    const { complaint, mail: original } = complaintRecord('a@example.com');
    expect(parseSesEvent(JSON.stringify({ notificationType: 'Complaint', complaint, mail: original }))).toMatchObject({
      kind: 'feedback',
      eventType: 'Complaint',
    });
  });

  it('ignores the other event types', () => {
    expect(parseSesEvent(JSON.stringify(deliveryRecord('a@example.com')))).toEqual({ kind: 'ignored', eventType: 'Delivery' });
    expect(parseSesEvent(JSON.stringify({ eventType: 'Open', mail: mail('a@example.com'), open: {} }))).toEqual({
      kind: 'ignored',
      eventType: 'Open',
    });
  });

  it.each([
    ['not JSON', 'not json at all', /not JSON/],
    ['no event type', JSON.stringify({ mail: {} }), /no eventType/],
    ['a non-string event type', JSON.stringify({ eventType: 7 }), /eventType/],
    [
      'a bounce without recipients',
      JSON.stringify({ eventType: 'Bounce', bounce: { bounceType: 'Permanent', timestamp: '2017-08-05T00:41:02.669Z' } }),
      /bounce\.bouncedRecipients/,
    ],
    ['a bounce to a non-address', JSON.stringify(bounceRecord('not an address')), /emailAddress/],
    ['a bounce with a bad timestamp', JSON.stringify(bounceRecord('a@example.com', { timestamp: 'yesterday' })), /bounce\.timestamp/],
    ['a complaint without its object', JSON.stringify({ eventType: 'Complaint', mail: mail('a@example.com') }), /complaint/],
  ])('calls %s malformed, with the reason', (_, message, problem) => {
    const event = parseSesEvent(message);
    expect(event.kind).toBe('malformed');
    expect(event.kind === 'malformed' && event.problem).toMatch(problem);
  });
});

describe('maskAddress', () => {
  it('keeps the first character and the domain, and the SHA-256 of the normalised address', () => {
    expect(maskAddress(' Jane.Doe@Example.com')).toEqual({
      address: 'j…@example.com',
      addressSha256: createHash('sha256').update('jane.doe@example.com').digest('hex'),
    });
  });
});

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
