import { type Claims, endOtherSessionsAfter, readAsActor, requireAal2 } from '#lib/auth/session-items.ts';
import { AppError, notFound } from '#lib/core/errors.ts';
import type { Db } from '#lib/db/service.ts';
import { commit, named, write } from '#lib/db/transactions.ts';
import type { Identity } from '#lib/wire/responses.ts';
import { hasPassword, identitiesView } from '#lib/wire/views.ts';
import { SECOND_FACTOR_FIRST, hasVerifiedFactor } from '../account.ts';
import { accountMessage } from '../verification.ts';

/** The signed-in account's ways in (docs/sso.md): the password's (`email`) while there is one, then each linked provider's. */
export const listIdentities = async (db: Db, claims: Claims): Promise<Identity[]> => {
  const {
    items: [u],
  } = await readAsActor(db, claims, (userUuid) => [[db.entities.user, { userUuid }]] as const);
  if (!u) throw new AppError('unauthorized');
  return identitiesView(u);
};

const LAST_WAY_IN = 'This is the only way to sign in to this account: set a password (or link another provider) before unlinking it.';

/**
 * Unlinks a provider identity from the signed-in account, never its last way in (a password or
 * another identity must remain). From aal2 when the account has a second factor. The identity's
 * claim goes in the same transaction, conditional on the list as read; the owner is told, and the
 * account's other sessions end (one opened through that identity among them).
 * Throws `unauthorized`, `mfa_required`, `not_found`, `validation_failed`, `conflict`.
 */
export const unlinkIdentity = async (db: Db, claims: Claims, identityId: string, now: Date): Promise<Record<string, never>> => {
  const {
    actor,
    items: [u],
  } = await readAsActor(db, claims, (userUuid) => [[db.entities.user, { userUuid }]] as const);
  if (!u) throw new AppError('unauthorized');
  if (hasVerifiedFactor(u)) requireAal2(actor, SECOND_FACTOR_FIRST);
  const identities = u.identities ?? [];
  const index = identities.findIndex((i) => i.id === identityId);
  const identity = identities[index];
  if (identity === undefined) {
    if (identityId === u.userUuid && hasPassword(u))
      throw new AppError('validation_failed', 'The password is not unlinked: change it, or keep it.');
    throw notFound('No identity with that id is linked to your account.');
  }
  if (identities.length === 1 && !hasPassword(u)) throw new AppError('validation_failed', LAST_WAY_IN);
  await commit(
    () =>
      write(db, (tx) => [
        named(
          'identity',
          tx.identityClaim
            .delete({ provider: identity.provider, subject: identity.subject })
            .where((a, op) => op.eq(a.userUuid, u.userUuid))
            .commit(),
        ),
        named(
          'account',
          tx.user
            .patch({ userUuid: u.userUuid })
            .set({ identities: identities.filter((i) => i.id !== identityId), identitiesVersion: (u.identitiesVersion ?? 0) + 1 })
            // The list and the password as read: the count of ways in above still holds.
            .where((a, op) => `${op.eq(a.identitiesVersion, u.identitiesVersion ?? 0)} AND ${op.eq(a.passwordHash, u.passwordHash)}`)
            .commit(),
        ),
        named(
          'mail',
          tx.outboxMessage.create(accountMessage('identities_changed', { userUuid: u.userUuid, address: u.email }, now)).commit(),
        ),
      ]),
    { otherwise: () => new AppError('conflict') },
  );
  // Sessions opened through the identity (a thief's, perhaps) end with it; the caller's goes on.
  await endOtherSessionsAfter(db, u.userUuid, actor.sessionId);
  return {};
};
