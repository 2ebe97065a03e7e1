import type { SNSEvent } from 'aws-lambda';
import { db } from '#lib/db/service.ts';
import { applySesEvent } from '#lib/mail/suppression.ts';

/**
 * SES bounce and complaint events: the configuration set publishes them to an SNS topic, which
 * invokes this function (asynchronously, one record per invocation in practice).
 * lib/mail/suppression.ts reads each message, suppresses the addresses and counts them; a message
 * it cannot read is logged and dropped, and a DynamoDB failure throws, so Lambda retries the
 * invocation (twice, then its on-failure destination).
 */
export const handler = async (event: SNSEvent): Promise<void> => {
  for (const record of event.Records) {
    await applySesEvent(db(), record.Sns.Message, { snsMessageId: record.Sns.MessageId, topicArn: record.Sns.TopicArn });
  }
};
