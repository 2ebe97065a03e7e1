import { BatchGetCommand } from '@aws-sdk/lib-dynamodb';
import type { Entity, EntityItem } from 'electrodb';
import { untilProcessed } from './pages.ts';
import type { Db } from './service.ts';
import { KEYS } from './table.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- ElectroDB's own bound for "any entity"
type AnyEntity = Entity<any, any, any, any>;

/** One item to read: an entity and its key's composite attributes. */
export type Read = readonly [AnyEntity, object];

type Key = Record<string, string>;
const keyId = (key: Key): string => `${key[KEYS.pk]}\u0000${key[KEYS.sk]}`;
const BATCH = 100;

/**
 * Reads items of any entities in one strongly consistent BatchGetItem (one per 100 keys, sent
 * together), and answers in the order asked, null where an item does not exist. This is how a
 * request reads its caller's session together with the data it needs anyway: no extra round trip
 * for the check.
 */
export const readTogether = async <const T extends readonly Read[]>(
  db: Db,
  reads: T,
): Promise<{ -readonly [I in keyof T]: EntityItem<T[I][0]> | null }> => {
  const asked = reads.map(([entity, composite]) => {
    const { Key, TableName } = entity.get(composite).params() as { Key: Key; TableName: string };
    return { entity, Key, TableName };
  });
  const table = asked[0]?.TableName;
  const unique = [...new Map(asked.map((a) => [keyId(a.Key), a.Key])).values()];
  const found = new Map<string, Record<string, unknown>>();
  const chunks: Key[][] = [];
  for (let i = 0; i < unique.length; i += BATCH) chunks.push(unique.slice(i, i + BATCH));
  // Side by side: a page of 100 rows plus the caller's own items is two requests, one round trip.
  await Promise.all(
    chunks.map((chunk) =>
      untilProcessed(chunk, async (keys) => {
        const res = await db.documents.send(
          new BatchGetCommand({ RequestItems: { [table as string]: { Keys: keys, ConsistentRead: true } } }),
        );
        for (const item of res.Responses?.[table as string] ?? []) found.set(keyId(item as Key), item);
        return { unprocessed: (res.UnprocessedKeys?.[table as string]?.Keys ?? []) as Key[] };
      }),
    ),
  );
  return asked.map(({ entity, Key }) => {
    const item = found.get(keyId(Key));
    return item ? entity.parse({ Item: item }).data : null;
  }) as { -readonly [I in keyof T]: EntityItem<T[I][0]> | null };
};
