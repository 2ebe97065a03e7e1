/**
 * The deployed webhook queue (lib/events/webhooks/queue.ts) makes the SQS calls the delivery relies on:
 * what is checked here is each call itself, so the SQS client is mocked (aws-sdk-client-mock); the
 * queue's behaviour is SQS's. Also the retry schedule's arithmetic (lib/events/webhooks/dispatch.ts).
 */
import { ChangeMessageVisibilityCommand, SQSClient, SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { describe, expect, it } from 'vitest';
import { WEBHOOK_ATTEMPTS, WEBHOOK_DELIVERY, WEBHOOK_RETRY_DELAYS_SECONDS } from '#lib/http/background.ts';
import { retryDelaySeconds } from '#lib/events/webhooks/dispatch.ts';
import { sqsQueue } from '#lib/events/queues.ts';
import { type DeliveryOrder, DeliveryOrderSchema, ordersOn } from '#lib/events/webhooks/queue.ts';

const URL = 'https://sqs.eu-west-1.amazonaws.com/123456789012/RosterData-WebhookQueue';
const order = (n: number): DeliveryOrder => ({
  teamId: 1000 + n,
  endpointId: 2000 + n,
  entryId: `019ac1f2-6b3d-7e4f-8a9b-${String(n).padStart(12, '0')}`,
});

describe('the SQS webhook queue', () => {
  it('sends orders as JSON in batches of at most 10, one SendMessageBatch each', async () => {
    const client = new SQSClient({ region: 'eu-west-1', credentials: { accessKeyId: 'x', secretAccessKey: 'y' } });
    const sqs = mockClient(client);
    sqs.on(SendMessageBatchCommand).resolves({ Successful: [], Failed: [] });
    const orders = Array.from({ length: 23 }, (_, i) => order(i));
    await ordersOn(sqsQueue(URL, client)).send(orders);
    const calls = sqs.commandCalls(SendMessageBatchCommand).map((c) => c.args[0].input);
    expect(calls.map((c) => c.Entries?.length)).toEqual([10, 10, 3]);
    expect(calls.every((c) => c.QueueUrl === URL)).toBe(true);
    const bodies = calls.flatMap((c) => c.Entries ?? []).map((e) => JSON.parse(e.MessageBody as string) as unknown);
    expect(bodies).toEqual(orders);
    // Every body is an order the delivery function accepts.
    expect(bodies.every((b) => DeliveryOrderSchema.safeParse(b).success)).toBe(true);
  });

  it('throws when SQS did not take every message (the fan-out batch is then retried)', async () => {
    const client = new SQSClient({ region: 'eu-west-1', credentials: { accessKeyId: 'x', secretAccessKey: 'y' } });
    mockClient(client)
      .on(SendMessageBatchCommand)
      .resolves({ Successful: [], Failed: [{ Id: '1', Code: 'InternalError', SenderFault: false }] });
    await expect(ordersOn(sqsQueue(URL, client)).send([order(1), order(2)])).rejects.toThrow(/refused 1 messages: InternalError/);
  });

  it('sets a failed message visible again after the delay: ChangeMessageVisibility', async () => {
    const client = new SQSClient({ region: 'eu-west-1', credentials: { accessKeyId: 'x', secretAccessKey: 'y' } });
    const sqs = mockClient(client);
    sqs.on(ChangeMessageVisibilityCommand).resolves({});
    await ordersOn(sqsQueue(URL, client)).retryAfter('receipt-1', 300);
    expect(sqs.commandCalls(ChangeMessageVisibilityCommand).map((c) => c.args[0].input)).toEqual([
      { QueueUrl: URL, ReceiptHandle: 'receipt-1', VisibilityTimeout: 300 },
    ]);
  });
});

describe('the retry schedule', () => {
  it('waits 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h: 8 attempts over more than 24 hours, no wait past the 12 hours SQS allows', () => {
    expect(Array.from({ length: WEBHOOK_ATTEMPTS }, (_, i) => retryDelaySeconds(i + 1))).toEqual([
      5,
      300,
      1800,
      7200,
      18_000,
      36_000,
      36_000,
      undefined,
    ]);
    const total = WEBHOOK_RETRY_DELAYS_SECONDS.reduce((a, b) => a + b, 0);
    expect(total).toBeGreaterThan(24 * 3600);
    expect(Math.max(...WEBHOOK_RETRY_DELAYS_SECONDS)).toBeLessThanOrEqual(12 * 3600);
    // The queue keeps a message past its last attempt.
    expect(WEBHOOK_DELIVERY.retentionDays * 86_400).toBeGreaterThan(total + WEBHOOK_DELIVERY.visibilitySeconds * WEBHOOK_ATTEMPTS);
  });
});
