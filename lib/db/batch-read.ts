import { BatchGetCommand } from '@aws-sdk/lib-dynamodb';
import type { Entity, EntityItem } from 'electrodb';
import { KEYS } from './entities/table.ts';
import { untilProcessed } from './pages.ts';
import type { Db } from './service.ts';

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
 * for the check. Reads from index `relaxedFrom` on (a page's users, say) may be eventually
 * consistent: when everything does not fit one request anyway, they go in requests of their own
 * at half the read units.
 */
export const readTogether = async <const T extends readonly Read[]>(
  db: Db,
  reads: T,
  { relaxedFrom = reads.length }: { relaxedFrom?: number } = {},
): Promise<{ -readonly [I in keyof T]: EntityItem<T[I][0]> | null }> => {
  const asked = reads.map(([entity, composite]) => {
    const { Key, TableName } = entity.get(composite).params() as { Key: Key; TableName: string };
    return { entity, Key, TableName };
  });
  const table = asked[0]?.TableName as string;
  const uniqueOf = (list: typeof asked) => [...new Map(list.map((a) => [keyId(a.Key), a.Key])).values()];
  const all = uniqueOf(asked);
  const batches: { keys: Key[]; consistent: boolean }[] = [];
  const split = (keys: Key[], consistent: boolean) => {
    for (let i = 0; i < keys.length; i += BATCH) batches.push({ keys: keys.slice(i, i + BATCH), consistent });
  };
  if (all.length <= BATCH) split(all, true);
  else {
    const strict = uniqueOf(asked.slice(0, relaxedFrom));
    const strictIds = new Set(strict.map(keyId));
    split(strict, true);
    split(
      uniqueOf(asked.slice(relaxedFrom)).filter((key) => !strictIds.has(keyId(key))),
      false,
    );
  }
  const found = new Map<string, Record<string, unknown>>();
  // Side by side: a page of 100 rows and the caller's own items are two requests, one round trip.
  await Promise.all(
    batches.map(({ keys: batch, consistent }) =>
      untilProcessed(batch, async (keys) => {
        const res = await db.documents.send(new BatchGetCommand({ RequestItems: { [table]: { Keys: keys, ConsistentRead: consistent } } }));
        for (const item of res.Responses?.[table] ?? []) found.set(keyId(item as Key), item);
        return { unprocessed: (res.UnprocessedKeys?.[table]?.Keys ?? []) as Key[] };
      }),
    ),
  );
  return asked.map(({ entity, Key }) => {
    const item = found.get(keyId(Key));
    return item ? entity.parse({ Item: item }).data : null;
  }) as { -readonly [I in keyof T]: EntityItem<T[I][0]> | null };
};
