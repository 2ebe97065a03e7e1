/**
 * commit() answers a failed condition by the failed item's name, never by its position: the same
 * transaction with its items in another order (or with an item added) gives the same error. Real
 * transactions on DynamoDB Local.
 */
import { randomInt, randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { db } from '#lib/db/service.ts';
import type { Tx } from '#lib/db/service.ts';
import { type Named, type OnFailed, commit, named, write } from '#lib/db/transactions.ts';
import { AppError } from '#lib/core/errors.ts';

type Name = 'slug' | 'id' | 'extra';

/** A slug claim and an id claim (both create-only), and optionally one more fresh claim. */
const claims = (slug: string, id: number) => (tx: Tx) => ({
  slug: named('slug', tx.slugClaim.create({ slug, teamId: id }).commit()),
  id: named('id', tx.idClaim.create({ kind: 'invite', id }).commit()),
  extra: named('extra', tx.idClaim.create({ kind: 'membership', id }).commit()),
});

const ORDERS: Name[][] = [
  ['slug', 'id'],
  ['id', 'slug'],
  ['extra', 'id', 'slug'],
  ['id', 'extra', 'slug'],
];

const onFailed: OnFailed<Name> = {
  slug: () => new AppError('slug_taken'),
  id: () => new AppError('conflict'),
  extra: () => new AppError('already_member'),
};

/** The error code commit() throws for the transaction of these items in this order. */
const codeOf = async (slug: string, id: number, order: Name[]): Promise<string> => {
  const error: unknown = await commit(
    () => write(db(), (tx) => order.map((name): Named<Name> => claims(slug, id)(tx)[name])),
    onFailed,
  ).then(
    () => 'written',
    (e: unknown) => e,
  );
  return error instanceof AppError ? error.code : String(error);
};

/** Takes a slug and an id (kind invite) as a committed transaction would. */
const taken = async (slug: string, id: number) =>
  commit(() => write(db(), (tx) => [claims(slug, id)(tx).slug, claims(slug, id)(tx).id]), { otherwise: () => new AppError('conflict') });

describe('commit: failed conditions by name', () => {
  // ElectroDB sends a transaction through an entity made before it (lib/db/service.ts makes them
  // on first use); a use case always has read one first, this test has not.
  beforeAll(() => {
    expect(db().entities.slugClaim).toBeDefined();
  });

  it('maps a taken slug to slug_taken whatever the position of its item', async () => {
    const slug = `s-${randomUUID()}`;
    await taken(slug, randomInt(1e9));
    for (const order of ORDERS) expect(await codeOf(slug, randomInt(1e9), order), order.join(',')).toBe('slug_taken');
  });

  it('maps a taken id to its own answer whatever the position of its item', async () => {
    const id = randomInt(1e9);
    await taken(`s-${randomUUID()}`, id);
    for (const order of ORDERS) expect(await codeOf(`s-${randomUUID()}`, id, order), order.join(',')).toBe('conflict');
  });

  it('answers in onFailed’s order when several conditions fail at once, whatever the items’ order', async () => {
    const slug = `s-${randomUUID()}`;
    const id = randomInt(1e9);
    await taken(slug, id);
    // Both the slug and the id are taken: `slug` is first in onFailed, so slug_taken every time.
    for (const order of ORDERS) expect(await codeOf(slug, id, order), order.join(',')).toBe('slug_taken');
  });

  it('retries when the answer says so, and `otherwise` answers the names left out', async () => {
    const slug = `s-${randomUUID()}`;
    const id = randomInt(1e9);
    await taken(`s-${randomUUID()}`, id);
    let fresh = id;
    let tries = 0;
    await commit(
      () => {
        tries++;
        return write(db(), (tx) => [
          named('slug', tx.slugClaim.create({ slug, teamId: fresh }).commit()),
          named('id', tx.idClaim.create({ kind: 'invite', id: fresh }).commit()),
        ]);
      },
      {
        slug: () => new AppError('slug_taken'),
        otherwise: () => {
          fresh = randomInt(1e9);
          return 'retry';
        },
      },
    );
    expect(tries).toBe(2);
    const { data } = await db().entities.slugClaim.get({ slug }).go({ consistent: true });
    expect(data?.teamId).toBe(fresh);
  });

  it('refuses at compile time a name the transaction does not have, or a name left unanswered without `otherwise`', () => {
    const attempt = () => write(db(), (tx) => [claims('x', 1)(tx).slug, claims('x', 1)(tx).id]);
    // Type checks only (tsc): these calls are never made.
    const typeChecks = () => [
      // @ts-expect-error 'team' is not an item of this transaction.
      commit(attempt, { slug: () => 'retry', id: () => 'retry', team: () => 'retry' }),
      // @ts-expect-error 'id' has no answer and there is no `otherwise`.
      commit(attempt, { slug: () => 'retry' }),
      commit(attempt, { slug: () => 'retry', otherwise: () => 'retry' }),
    ];
    expect(typeof typeChecks).toBe('function');
  });
});
