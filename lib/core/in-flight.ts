/** Runs `work` over `items`, at most `width` at once. */
export const inFlight = async <T>(items: readonly T[], width: number, work: (item: T) => Promise<void>): Promise<void> => {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, items.length) }, async () => {
      while (next < items.length) await work(items[next++] as T);
    }),
  );
};
