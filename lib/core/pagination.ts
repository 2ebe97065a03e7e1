/** One page of a list: the items and, when more follow, the opaque cursor of the next page. */
export class Page<T> {
  readonly items: T[];
  readonly cursor: string | null;

  constructor(items: T[], cursor: string | null) {
    this.items = items;
    this.cursor = cursor;
  }
}

export interface PageRequest {
  limit: number;
  cursor?: string | undefined;
}

export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 1000;
