import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readTogether } from '#lib/db/batch-read.ts';
import { db } from '#lib/db/service.ts';

/** readTogether against DynamoDB Local: the fewest requests first, then the fewest read units. */
const sent: { keys: number; consistent: boolean }[] = [];

const users = Array.from({ length: 120 }, (_, i) => ({
  userUuid: randomUUID(),
  userId: i + 1,
  email: `u${i}@example.com`,
  firstName: 'U',
  lastName: `${i}`,
  passwordHash: 'x',
  createdAt: '2026-11-21T00:00:00.000Z',
  updatedAt: '2026-11-21T00:00:00.000Z',
}));

beforeAll(async () => {
  await db().entities.user.put(users).go();
  db().documents.middlewareStack.add(
    (next, context) => (args) => {
      if (context.commandName === 'BatchGetItemCommand') {
        const [request] = Object.values(
          (args.input as { RequestItems: Record<string, { Keys: unknown[]; ConsistentRead?: boolean }> }).RequestItems,
        );
        sent.push({ keys: request?.Keys.length ?? 0, consistent: request?.ConsistentRead === true });
      }
      return next(args);
    },
    { step: 'initialize', name: 'recordBatchGets' },
  );
});
afterAll(() => db().documents.middlewareStack.remove('recordBatchGets'));

const reads = (list: typeof users) => list.map((u) => [db().entities.user, { userUuid: u.userUuid }] as const);

describe('readTogether', () => {
  it('reads everything in one strongly consistent request when it fits, in the order asked', async () => {
    sent.length = 0;
    const found = await readTogether(db(), [...reads(users.slice(0, 2)), ...reads(users.slice(2, 100))], { relaxedFrom: 2 });
    expect(sent).toEqual([{ keys: 100, consistent: true }]);
    expect(found.map((u) => u?.userId)).toEqual(users.slice(0, 100).map((u) => u.userId));
  });

  it('past 100 keys, sends the relaxed reads eventually consistent, in requests of their own', async () => {
    sent.length = 0;
    const missing = [db().entities.user, { userUuid: randomUUID() }] as const;
    const found = await readTogether(db(), [...reads(users.slice(0, 2)), ...reads(users.slice(2)), missing], { relaxedFrom: 2 });
    expect([...sent].sort((a, b) => b.keys - a.keys)).toEqual([
      { keys: 100, consistent: false },
      { keys: 19, consistent: false },
      { keys: 2, consistent: true },
    ]);
    expect(found.slice(0, -1).map((u) => u?.userId)).toEqual(users.map((u) => u.userId));
    expect(found.at(-1)).toBeNull();
  });

  it('without relaxed reads, everything stays strongly consistent', async () => {
    sent.length = 0;
    await readTogether(db(), reads(users));
    expect(sent.every((r) => r.consistent)).toBe(true);
    expect(sent.map((r) => r.keys).sort((a, b) => b - a)).toEqual([100, 20]);
  });
});
