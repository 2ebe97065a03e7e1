/** lib/mail/suppression.ts: SES event records parsed, and addresses masked for the logs. */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { maskAddress, parseSesEvent } from '#lib/mail/suppression.ts';
import { bounceRecord, complaintRecord, deliveryRecord, mail } from '../helpers/ses-events.ts';

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
