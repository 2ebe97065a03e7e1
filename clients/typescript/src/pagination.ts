import type { Ok } from './caller.js';
import type { Page, PageQuery } from './types.js';

/** The `cursor` of the `rel="next"` URL in a `Link` header, or null when no page follows. */
export const nextCursor = (link: string | null): string | null => {
  const url = link === null ? undefined : /<([^>]*)>\s*;\s*rel="?next"?/i.exec(link)?.[1];
  return url === undefined ? null : new URL(url).searchParams.get('cursor');
};

/** A list answer as a page: its items, and the next cursor from its `Link` header. */
export const toPage = <T>({ data, response }: Ok<{ data: T[] }>): Page<T> => ({
  data: data.data,
  next: nextCursor(response.headers.get('link')),
});

/**
 * Every item of a list, page after page, each page fetched when the loop reaches it. Each page is
 * asked for with the whole first query (filters such as the audit log's `action` included) and the
 * next cursor: the server binds a cursor to its filter and refuses it without it.
 */
export async function* paginate<T, Q extends PageQuery>(list: (query: Q) => Promise<Page<T>>, query: Q): AsyncGenerator<T> {
  let cursor = query.cursor;
  do {
    const page = await list(cursor === undefined ? query : { ...query, cursor });
    yield* page.data;
    cursor = page.next ?? undefined;
  } while (cursor !== undefined);
}
