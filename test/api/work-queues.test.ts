/**
 * The work functions' side of their queues (lib/events/queued-records.ts), on a local queue that
 * only holds what it is sent: a failure is handed back for a retry in seconds; after
 * WORK_REQUEUE_AFTER receives, a failure that passes (an outage) is queued again as a new message
 * rather than left to use up its receives, while one that does not (a bug) goes on to the dead letters.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type LocalQueue, startLocalQueue } from '#infra/local-queue.ts';
import { workOnQueuedRecords } from '#lib/events/queued-records.ts';
import { WORK_REQUEUE_AFTER } from '#lib/http/background.ts';
import { queuedEvent } from '../helpers/queued.ts';

const record = { eventName: 'INSERT', dynamodb: { SequenceNumber: '1', NewImage: { __edb_e__: { S: 'auditEntry' } } } };
const outage = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8000'), { code: 'ECONNREFUSED' });

let queue: LocalQueue | undefined;
afterEach(() => queue?.stop());

describe('work queue failures', () => {
  it('hands a failed record back to its queue for another receive', async () => {
    queue = startLocalQueue('fanout', { receive: false });
    const event = queuedEvent([record], WORK_REQUEUE_AFTER - 1);
    const answer = await workOnQueuedRecords('webhook-fanout', event, async () => {
      throw outage;
    });
    expect(answer).toEqual({ batchItemFailures: [{ itemIdentifier: event.Records[0]?.messageId }] });
    expect(queue.size()).toBe(0);
  });

  it(`queues a record again, as new, when an outage has failed it ${WORK_REQUEUE_AFTER} times: no outage fills the dead letters`, async () => {
    queue = startLocalQueue('fanout', { receive: false });
    const event = queuedEvent([record, record], WORK_REQUEUE_AFTER);
    const [first, second] = event.Records;
    // One not settled yet (no error), one failed by the outage: both pass with time.
    const answer = await workOnQueuedRecords('webhook-fanout', event, async () => [
      { messageId: first?.messageId as string },
      { messageId: second?.messageId as string, error: outage },
    ]);
    expect(answer).toEqual({ batchItemFailures: [] });
    expect(queue.pending()).toEqual([first?.body, second?.body]);
  });

  it('lets a record that fails for another reason go on to the dead letters', async () => {
    queue = startLocalQueue('fanout', { receive: false });
    const event = queuedEvent([record], WORK_REQUEUE_AFTER);
    const answer = await workOnQueuedRecords('webhook-fanout', event, async () => {
      throw new TypeError('a bug');
    });
    expect(answer).toEqual({ batchItemFailures: [{ itemIdentifier: event.Records[0]?.messageId }] });
    expect(queue.size()).toBe(0);
  });

  it('drops a message that is not a stream record, without running the work on it', async () => {
    queue = startLocalQueue('fanout', { receive: false });
    const event = queuedEvent([record]);
    const bad = { ...event.Records[0], messageId: 'bad', body: 'not json' } as (typeof event.Records)[number];
    const seen: string[] = [];
    const answer = await workOnQueuedRecords('webhook-fanout', { Records: [bad, ...event.Records] }, async (queued) => {
      seen.push(...queued.map((q) => q.messageId));
      return [];
    });
    expect(answer).toEqual({ batchItemFailures: [] });
    expect(seen).toEqual([event.Records[0]?.messageId]);
  });
});
