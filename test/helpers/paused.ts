import { type Db, db } from '#lib/db/service.ts';

/**
 * db(), except that the first write transaction runs `meanwhile` before it is sent: a use case
 * that has read and is about to write meets a change made in between, every time.
 */
export const pausedBeforeFirstWrite = (meanwhile: () => Promise<void>): Db => {
  const real = db();
  let paused = false;
  const write = ((fn) => {
    const built = real.transaction.write(fn);
    return {
      ...built,
      go: async (options) => {
        if (!paused) {
          paused = true;
          await meanwhile();
        }
        return built.go(options);
      },
    };
  }) as Db['transaction']['write'];
  const transaction = { ...real.transaction, write };
  return new Proxy(real, { get: (target, prop, receiver) => (prop === 'transaction' ? transaction : Reflect.get(target, prop, receiver)) });
};
