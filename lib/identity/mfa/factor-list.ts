import { AppError, notFound } from '#lib/core/errors.ts';
import type { UserItem } from '#lib/db/items.ts';
import type { Db, Tx } from '#lib/db/service.ts';
import { type TxItem, commit, named, write } from '#lib/db/transactions.ts';

/** The factors as the user item lists them (docs/mfa.md). */
export type FactorEntry = NonNullable<UserItem['factors']>[number];

/** At most this many factors an account (verified or not), as GoTrue's default. */
export const MAX_FACTORS = 10;

export const factorsOf = (u: UserItem): FactorEntry[] => u.factors ?? [];

export const NO_FACTOR = 'No factor with that id.';

/** Why a factor is not added from aal1 (enrolment, or a verify that would activate one). */
export const ADD_FROM_AAL2 =
  'This account has a verified factor: another one is added only from a session that proved one. Verify a code first.';

export const factorNamed = (u: UserItem, factorId: string): FactorEntry => {
  const entry = factorsOf(u).find((f) => f.id === factorId);
  if (!entry) throw notFound(NO_FACTOR);
  return entry;
};

/**
 * The user item's new factor list, in a transaction: conditional on `factorsVersion` as read, so
 * two changes of the list at once cannot both pass.
 */
export const writeFactorList = (tx: Tx, u: UserItem, factors: FactorEntry[], updatedAt: string) =>
  tx.user
    .patch({ userUuid: u.userUuid })
    .set({ factors, factorsVersion: (u.factorsVersion ?? 0) + 1, updatedAt })
    .where((a, op) => (u.factorsVersion === undefined ? op.notExists(a.factorsVersion) : op.eq(a.factorsVersion, u.factorsVersion)))
    .commit();

export const listChanged = () => new AppError('conflict', 'The factors changed at the same time by another request; try again.');

/** What a change of the factor list writes, decided from the user item as it is (plan may throw: its rules hold for that item). */
export interface ListChange {
  factors: FactorEntry[];
  /** The factor's own items, in the same transaction. */
  also: (tx: Tx) => TxItem[];
}

/**
 * Changes the factor list: `plan` decides from the user item, then one transaction writes the list
 * and `also`. Another change of the list that won the race makes this one read the user again
 * and plan anew (the rules are checked against what is there then), up to commit's attempts.
 * Returns the user item the change was planned from. Throws what `plan` throws, `unauthorized`,
 * `conflict`.
 */
export const changeFactorList = async (db: Db, first: UserItem, stamp: string, plan: (u: UserItem) => ListChange): Promise<UserItem> => {
  let u = first;
  let reread = false;
  await commit(
    async () => {
      if (reread) {
        const fresh = (await db.entities.user.get({ userUuid: u.userUuid }).go({ consistent: true })).data;
        if (!fresh) throw new AppError('unauthorized');
        u = fresh;
      }
      const { factors, also } = plan(u);
      return write(db, (tx) => [named('list', writeFactorList(tx, u, factors, stamp)), named('also', ...also(tx))]);
    },
    {
      list: () => {
        reread = true;
        return 'retry';
      },
      also: listChanged,
    },
  );
  return u;
};
