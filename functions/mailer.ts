import type { Context, DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { inFlight } from '#lib/core/in-flight.ts';
import { log } from '#lib/core/log.ts';
import { timeBudget } from '#lib/core/time-budget.ts';
import { db } from '#lib/db/service.ts';
import { newImageOf } from '#lib/db/stream-records.ts';
import { type OutboxRef, outboxRefOf } from '#lib/mail/outbox-ref.ts';
import { deliver } from '#lib/mail/outbox.ts';
import { createMailer } from '#lib/mail/transports.ts';

/**
 * The mailer: the table's stream (NEW_IMAGE) calls it with batches of records; each new outbox
 * message is delivered (lib/mail/outbox.ts). No record is ever reported failed: a stream retries a
 * failed record before anything behind it in its shard, so one message that cannot be sent now
 * (its send failed, the database is down, another mailer holds it) would hold up every message
 * after it, for minutes after an outage. Such a message stays PENDING (or SENDING until its lease
 * runs out), and the outbox sweeper (functions/outbox-sweep.ts) delivers it a grace period later.
 * Only a crash or a timeout of the whole invocation makes the stream retry the batch (and, after
 * the last attempt, put it in the dead-letter queue). Locally infra/stream-poller.ts calls it.
 */
const mailer = createMailer();

/** How many messages of one batch are sent at the same time. */
const CONCURRENCY = 5;

/** The outbox message a record inserted, as the stream's image has it; else undefined. */
export const outboxMessageOf = (record: DynamoDBRecord): OutboxRef | undefined => {
  const image = newImageOf(record, 'outboxMessage');
  // One lacking what its kind needs is left to the sweeper, which reports it.
  return (
    image &&
    outboxRefOf({
      messageId: image.text('messageId'),
      kind: image.text('kind'),
      createdAt: image.text('createdAt'),
      inviteUuid: image.text('inviteUuid'),
      userUuid: image.text('userUuid'),
      address: image.text('address'),
      teamId: image.number('teamId'),
      transferId: image.text('transferId'),
    })
  );
};

export const handler = async (event: DynamoDBStreamEvent, context: Context): Promise<DynamoDBBatchResponse> => {
  const { deadline } = timeBudget(() => context.getRemainingTimeInMillis());
  const messages = event.Records.map(outboxMessageOf).filter((m) => m !== undefined);
  await inFlight(messages, CONCURRENCY, async (message) => {
    try {
      const { outcome } = await deliver(db(), mailer, message, new Date(), { deadline });
      if (outcome === 'leased')
        log.info('outbox message held by another mailer: left to it and the sweeper', { messageId: message.messageId });
    } catch (error) {
      log.error('outbox delivery failed: left to the sweeper', error, { messageId: message.messageId });
    }
  });
  return { batchItemFailures: [] };
};
