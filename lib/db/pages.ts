import { setTimeout as sleep } from 'node:timers/promises';
import { type Entity, createConversions } from 'electrodb';
import { AppError } from '../errors.ts';
import { INDEXES, KEYS } from './table.ts';
import { Page, type PageRequest } from '../pagination.ts';

interface QueryOptions {
  count: number;
  limit: number;
  cursor: string | null;
}

const BAD_CURSOR = new AppError('validation_failed', undefined, { fields: { cursor: 'is not a cursor this list issued' } });

const KEY_FIELDS = new Set<string>([KEYS.pk, KEYS.sk, ...Object.values(INDEXES).flatMap((i) => [i.pk, i.sk])]);

/**
 * A cursor is ElectroDB's base64url JSON of a start key: only key fields, only key-sized strings.
 * Anything else (numbers the SDK cannot marshal, other attributes) is refused before a request.
 */
const isKeyShaped = (cursor: string): boolean => {
  try {
    const key: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    return (
      key !== null &&
      typeof key === 'object' &&
      !Array.isArray(key) &&
      Object.entries(key).every(([field, value]) => KEY_FIELDS.has(field) && typeof value === 'string' && value.length > 0 && value.length <= 1024)
    );
  } catch {
    return false;
  }
};

/** ElectroDB cannot decode it, or DynamoDB refuses it as a start key for this query. */
const isCursorError = (error: unknown): boolean => {
  for (let e = error; e instanceof Error; e = e.cause) {
    if (e.name === 'ValidationException' || /cursor/i.test(e.message)) return true;
  }
  return false;
};

/**
 * One page of a Query. Asks for limit + 1 items so that a next-page cursor is returned only when
 * another item really exists; the cursor points after the last item returned.
 */
export const queryPage = async <T>(
  run: (options: QueryOptions) => Promise<{ data: T[] }>,
  request: PageRequest,
  cursorAfter: (item: T) => string,
): Promise<Page<T>> => {
  if (request.cursor !== undefined && !isKeyShaped(request.cursor)) throw BAD_CURSOR;
  let data: T[];
  try {
    ({ data } = await run({ count: request.limit + 1, limit: request.limit + 1, cursor: request.cursor ?? null }));
  } catch (error) {
    if (request.cursor !== undefined && isCursorError(error)) throw BAD_CURSOR;
    throw error;
  }
  if (data.length <= request.limit) return new Page(data, null);
  const items = data.slice(0, request.limit);
  return new Page(items, cursorAfter(items[items.length - 1] as T));
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
export const untilProcessed = async <K, T>(
  keys: K[],
  run: (keys: K[]) => Promise<{ data?: T[]; unprocessed: K[] }>,
): Promise<T[]> => {
  const results: T[] = [];
  let pending = keys;
  for (let attempt = 0; pending.length > 0; attempt++) {
    if (attempt === 4) throw new AppError('unavailable', undefined, { headers: { 'Retry-After': '1' } });
    if (attempt > 0) await sleep(20 * 2 ** attempt);
    const { data = [], unprocessed } = await run(pending);
    results.push(...data);
    pending = unprocessed;
  }
  return results;
};
