import type { Context, DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { db } from '../lib/db/service.ts';
import { log } from '../lib/log.ts';
import { deliver, type OutboxRef, outboxRefOf } from '../lib/mail/outbox.ts';
import { createMailer } from '../lib/mail/transports.ts';

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

/** Time kept back from the invocation's end: deliver returns before Lambda would cut it off. */
const MARGIN_MS = 1000;

/** The outbox message a record inserted, as the stream's image has it; else undefined. */
export const outboxMessageOf = (record: DynamoDBRecord): OutboxRef | undefined => {
  if (record.eventName !== 'INSERT') return undefined;
  const image = record.dynamodb?.NewImage;
  if (image?.__edb_e__?.S !== 'outboxMessage') return undefined;
  // One lacking what its kind needs is left to the sweeper, which reports it.
  return outboxRefOf({
    messageId: image.messageId?.S,
    kind: image.kind?.S,
    createdAt: image.createdAt?.S,
    inviteUuid: image.inviteUuid?.S,
    userUuid: image.userUuid?.S,
    address: image.address?.S,
    teamId: image.teamId?.N === undefined ? undefined : Number(image.teamId.N),
    transferId: image.transferId?.S,
  });
};

export const handler = async (event: DynamoDBStreamEvent, context: Context): Promise<DynamoDBBatchResponse> => {
  const deadline = Date.now() + context.getRemainingTimeInMillis() - MARGIN_MS;
  const messages = event.Records.map(outboxMessageOf).filter((m) => m !== undefined);
  let next = 0;
  const work = async () => {
    for (let i = next++; i < messages.length; i = next++) {
      const message = messages[i] as OutboxRef;
      try {
        const { outcome } = await deliver(db(), mailer, message, new Date(), { deadline });
        if (outcome === 'leased')
          log.info('outbox message held by another mailer: left to it and the sweeper', { messageId: message.messageId });
      } catch (error) {
        log.error('outbox delivery failed: left to the sweeper', error, { messageId: message.messageId });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, messages.length) }, work));
  return { batchItemFailures: [] };
};
