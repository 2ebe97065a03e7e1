import { setTimeout as sleep } from 'node:timers/promises';
import { type Entity, createConversions } from 'electrodb';
import { AppError, serviceUnavailable } from '#lib/core/errors.ts';
import { Page, type PageRequest } from '#lib/core/pagination.ts';
import { openCursor, sealCursor } from './cursors.ts';
import type { Db } from './service.ts';

interface QueryOptions {
  count: number;
  limit: number;
  cursor: string | null;
}

const BAD_CURSOR = new AppError('validation_failed', undefined, { fields: { cursor: 'is not a cursor this list issued' } });

/**
 * DynamoDB refuses a start key this list sealed that no longer fits its query: my invites after an address
 * change (the list is bound to the user, its partition to the address).
 */
const isCursorError = (error: unknown): boolean => {
  for (let e = error; e instanceof Error; e = e.cause) {
    if (e.name === 'ValidationException') return true;
  }
  return false;
};

/**
 * One page of a Query. Asks for limit + 1 items so that a next-page cursor is returned only when
 * another item really exists; the cursor points after the last item returned. `list` names the
 * list and whose it is (e.g. `members ${teamId}`): a cursor is sealed to it (lib/db/cursors.ts),
 * so one that this list did not issue is refused before any Query.
 */
export const queryPage = async <T>(
  db: Db,
  list: string,
  run: (options: QueryOptions) => Promise<{ data: T[] }>,
  request: PageRequest,
  cursorAfter: (item: T) => string,
): Promise<Page<T>> => {
  const start = request.cursor === undefined ? null : await openCursor(db, list, request.cursor);
  if (start === undefined) throw BAD_CURSOR;
  let data: T[];
  try {
    ({ data } = await run({ count: request.limit + 1, limit: request.limit + 1, cursor: start }));
  } catch (error) {
    if (start !== null && isCursorError(error)) throw BAD_CURSOR;
    throw error;
  }
  if (data.length <= request.limit) return new Page(data, null);
  const items = data.slice(0, request.limit);
  return new Page(items, await sealCursor(db, list, cursorAfter(items[items.length - 1] as T)));
};

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- ElectroDB's own bound for "any entity"
type AnyEntity = Entity<any, any, any, any>;
type CursorMaker = { fromComposite: { toCursor: (item: object) => string } };

/** The cursor that continues a Query of `entity`'s `index` after a given item. */
export const cursorAfter = (entity: AnyEntity, index: string) => {
  const conversions = createConversions(entity).byAccessPattern as unknown as Record<string, CursorMaker>;
  return (item: object): string => (conversions[index] as CursorMaker).fromComposite.toCursor(item);
};

/**
 * Runs a batch read or write until DynamoDB has processed every key; a few retries with backoff,
 * then 503, since leftovers mean the table is throttling.
 */
export const untilProcessed = async <K, T>(keys: K[], run: (keys: K[]) => Promise<{ data?: T[]; unprocessed: K[] }>): Promise<T[]> => {
  const results: T[] = [];
  let pending = keys;
  for (let attempt = 0; pending.length > 0; attempt++) {
    if (attempt === 4) throw serviceUnavailable();
    if (attempt > 0) await sleep(20 * 2 ** attempt);
    const { data = [], unprocessed } = await run(pending);
    results.push(...data);
    pending = unprocessed;
  }
  return results;
};
