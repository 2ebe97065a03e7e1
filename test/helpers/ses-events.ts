/** SES event records as SES publishes them to SNS (the SES developer guide's "Examples of event data that Amazon SES publishes to Amazon SNS"), and SNS events carrying them. */
import { randomUUID } from 'node:crypto';
import type { SNSEvent } from 'aws-lambda';
import { vi } from 'vitest';

let n = 0;

export const address = (name = 'rcpt') => `${name}-${Date.now().toString(36)}-${++n}@example.com`;

export const mail = (to: string) => ({
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
export const bounceRecord = (
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
export const complaintRecord = (to: string, extra: Record<string, unknown> = {}) => ({
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
export const deliveryRecord = (to: string) => ({
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
export const snsEvent = (...messages: unknown[]): SNSEvent => ({
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
export const captured = () => {
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
