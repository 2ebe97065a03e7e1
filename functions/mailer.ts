import type { Context, DynamoDBRecord, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { inFlight } from '#lib/core/in-flight.ts';
import { log } from '#lib/core/log.ts';
import { timeBudget } from '#lib/core/time-budget.ts';
import { db } from '#lib/db/service.ts';
import { newImageOf } from '#lib/db/stream-records.ts';
import { type WorkFailure, workOnQueuedRecords } from '#lib/events/queued-records.ts';
import { MAILER } from '#lib/http/background.ts';
import { type OutboxRef, outboxRefOf } from '#lib/mail/outbox-ref.ts';
import { deliver } from '#lib/mail/outbox.ts';
import { createMailer } from '#lib/mail/transports.ts';

/**
 * The mailer: its work queue (fed by the table stream's reader, lib/events/stream-dispatch.ts) calls
 * it with new outbox messages' records, each delivered (lib/mail/outbox.ts). A message that was not
 * settled (the send or the database failed, another mailer's lease holds it, or it went out but
 * SENT was not recorded) is reported failed and comes back within seconds (lib/events/queued-records.ts),
 * so a message caught by an outage goes out soon after the recovery: at once if its lease ran out
 * meanwhile, else when it does. The outbox sweeper (functions/outbox-sweep.ts) delivers whatever
 * the queue gives up on. Locally infra/local-queue.ts calls it.
 */
const mailer = createMailer();

/** How many messages of one batch are sent at the same time. */
const CONCURRENCY = 5;

/** A delivery starts only with this much of the invocation left besides its send: its reads, claim and SENT write. */
const START_RESERVE_MS = 5000;

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

/** Outcomes that leave the message to be delivered again. */
const UNSETTLED = new Set(['leased', 'sent-unrecorded']);

export const handler = (event: SQSEvent, context: Context): Promise<SQSBatchResponse> =>
  workOnQueuedRecords(MAILER.name, event, async (queued) => {
    // A delivery starts only with time left for its send; the others of the batch are handed back.
    const { deadline, mayGoOn } = timeBudget(() => context.getRemainingTimeInMillis(), mailer.maxSendMs + START_RESERVE_MS);
    const failed: WorkFailure[] = [];
    const messages = queued.flatMap(({ messageId, record }) => {
      const message = outboxMessageOf(record);
      return message ? [{ messageId, message }] : [];
    });
    await inFlight(messages, CONCURRENCY, async ({ messageId, message }) => {
      if (!mayGoOn()) {
        failed.push({ messageId });
        return;
      }
      try {
        const { outcome } = await deliver(db(), mailer, message, new Date(), { deadline });
        if (UNSETTLED.has(outcome)) {
          log.info('outbox message not settled: it comes back', { messageId: message.messageId, outcome });
          failed.push({ messageId });
        }
      } catch (error) {
        log.error('outbox delivery failed: it comes back', error, { messageId: message.messageId });
        failed.push({ messageId, error });
      }
    });
    return failed;
  });
