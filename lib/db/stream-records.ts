import type { DynamoDBRecord } from 'aws-lambda';

/** A stream record's new image, its attributes read as plain values. */
export interface StreamImage {
  text: (name: string) => string | undefined;
  number: (name: string) => number | undefined;
}

type EventName = NonNullable<DynamoDBRecord['eventName']>;

/**
 * The new image of stream record `record` if it wrote an item of ElectroDB entity `entity` (the
 * `__edb_e__` attribute ElectroDB stores on each item) in one of `events`; undefined for any other
 * record. The stack's event-source filters (infra/stream-filters.ts) pass the same records.
 */
export const newImageOf = (record: DynamoDBRecord, entity: string, events: readonly EventName[] = ['INSERT']): StreamImage | undefined => {
  const image = record.dynamodb?.NewImage;
  if (!image || !record.eventName || !events.includes(record.eventName) || image.__edb_e__?.S !== entity) return undefined;
  return {
    text: (name) => image[name]?.S,
    number: (name) => {
      const n = image[name]?.N;
      return n === undefined ? undefined : Number(n);
    },
  };
};
