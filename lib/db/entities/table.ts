/**
 * The one table's physical shape. The CDK stack, the local server and the tests all build the
 * table from this, and the ElectroDB entities map onto these field and index names.
 */
export const KEYS = { pk: 'pk', sk: 'sk' } as const;

export const INDEXES = {
  gsi1: { pk: 'gsi1pk', sk: 'gsi1sk' },
  gsi2: { pk: 'gsi2pk', sk: 'gsi2sk' },
  /**
   * Sparse: pending invites by expiry hour and shard, for the invite sweeper (lib/teams/invites/sweep.ts);
   * unfinished outbox messages by shard and due time, for the outbox sweeper (lib/mail/outbox-sweep.ts).
   */
  gsi3: { pk: 'gsi3pk', sk: 'gsi3sk' },
} as const;

export type IndexName = keyof typeof INDEXES;

/** Epoch seconds after which DynamoDB's TTL may delete an item (housekeeping only: reads check expiry). */
export const TTL_ATTRIBUTE = 'ttl';

/** Every key attribute is a string: ElectroDB writes prefixed, zero-padded composite keys. */
export const ATTRIBUTE_DEFINITIONS = [KEYS.pk, KEYS.sk, ...Object.values(INDEXES).flatMap((i) => [i.pk, i.sk])].map((name) => ({
  AttributeName: name,
  AttributeType: 'S' as const,
}));

/**
 * The table's stream carries each changed item as it is after the change: its one reader
 * (functions/stream-dispatch.ts) queues new outbox messages, cleanup jobs and audit entries for
 * their work from it. The stack enables the same view.
 */
export const STREAM_VIEW_TYPE = 'NEW_IMAGE' as const;

/** CreateTable input for DynamoDB Local (the stack declares the same keys and indexes in CDK). */
export const createTableInput = (TableName: string) => ({
  TableName,
  BillingMode: 'PAY_PER_REQUEST' as const,
  StreamSpecification: { StreamEnabled: true, StreamViewType: STREAM_VIEW_TYPE },
  AttributeDefinitions: ATTRIBUTE_DEFINITIONS,
  KeySchema: [
    { AttributeName: KEYS.pk, KeyType: 'HASH' as const },
    { AttributeName: KEYS.sk, KeyType: 'RANGE' as const },
  ],
  GlobalSecondaryIndexes: Object.entries(INDEXES).map(([IndexName, index]) => ({
    IndexName,
    KeySchema: [
      { AttributeName: index.pk, KeyType: 'HASH' as const },
      { AttributeName: index.sk, KeyType: 'RANGE' as const },
    ],
    Projection: { ProjectionType: 'ALL' as const },
  })),
});
