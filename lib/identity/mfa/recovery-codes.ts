import { hashRecoveryCode, newRecoveryCodes, normaliseRecoveryCode } from '#lib/auth/recovery-codes.ts';
import { type Claims, readAsActor, requireAal2 } from '#lib/auth/session-items.ts';
import { raiseSession } from '#lib/auth/sessions.ts';
import { AppError } from '#lib/core/errors.ts';
import { isoMillis } from '#lib/core/time.ts';
import type { Db } from '#lib/db/service.ts';
import { commit, named, write } from '#lib/db/transactions.ts';
import { forgiveMfaGuess, takeMfaGuess } from '#lib/limits/mfa-attempts.ts';
import type { StepUp } from '#lib/wire/responses.ts';
import { accountMessage } from '../verification.ts';
import { hasVerifiedFactor } from '../account.ts';
import { listChanged } from './factor-list.ts';

const wrongCode = () => new AppError('mfa_verification_failed', 'That recovery code is wrong, or was used already.');

/**
 * Uses one of the caller's recovery codes in place of a second factor: the session is raised to
 * aal2 (`amr` says `recovery_code`) and the owner is mailed, in one transaction that also removes
 * the code from the set, conditional on it being there (so each works once, however many try at
 * once). A guess counts against the account's second-factor guesses (10 an hour). Throws
 * `unauthorized`, `mfa_verification_failed`, `rate_limited`.
 */
export const useRecoveryCode = async (db: Db, claims: Claims, typed: string, now: Date): Promise<StepUp> => {
  const {
    session,
    items: [u, codes],
  } = await readAsActor(
    db,
    claims,
    (userUuid) =>
      [
        [db.entities.user, { userUuid }],
        [db.entities.recoveryCodes, { userUuid }],
      ] as const,
  );
  if (!u) throw new AppError('unauthorized');
  const guess = await takeMfaGuess(db, u.userUuid, undefined, now);
  const code = normaliseRecoveryCode(typed);
  const hash = code === null ? undefined : hashRecoveryCode(code);
  if (!hasVerifiedFactor(u) || hash === undefined || !codes?.hashes?.includes(hash)) throw wrongCode();
  const raised = await raiseSession(u, session, 'recovery_code', now);
  await commit(
    () =>
      write(db, (tx) => [
        named(
          'code',
          tx.recoveryCodes
            .update({ userUuid: u.userUuid })
            .delete({ hashes: [hash] })
            .where((a, op) => op.contains(a.hashes, hash))
            .commit(),
        ),
        named('session', ...raised.writes(tx)),
        named(
          'notice',
          tx.outboxMessage.create(accountMessage('recovery_code_used', { userUuid: u.userUuid, address: u.email }, now)).commit(),
        ),
      ]),
    { code: wrongCode, session: () => new AppError('unauthorized'), notice: () => new AppError('conflict') },
  );
  await forgiveMfaGuess(db, guess);
  return raised.body;
};

/**
 * Ten new recovery codes in place of the old ones (which stop working), shown once: only from an
 * aal2 session of an account with a verified factor, written only while its factors are as read (a
 * removal of the last factor, or the account's deletion, meanwhile would leave codes of nothing).
 * Throws `unauthorized`, `mfa_required`, `conflict`.
 */
export const regenerateRecoveryCodes = async (db: Db, claims: Claims, now: Date): Promise<{ recovery_codes: string[] }> => {
  const {
    actor,
    items: [u],
  } = await readAsActor(db, claims, (userUuid) => [[db.entities.user, { userUuid }]] as const);
  if (!u) throw new AppError('unauthorized');
  if (!hasVerifiedFactor(u)) throw new AppError('mfa_required');
  requireAal2(actor);
  const codes = newRecoveryCodes();
  await commit(
    () =>
      write(db, (tx) => [
        named(
          'codes',
          tx.recoveryCodes.put({ userUuid: u.userUuid, hashes: codes.map(hashRecoveryCode), createdAt: isoMillis(now) }).commit(),
        ),
        named(
          'factors',
          tx.user
            .check({ userUuid: u.userUuid })
            .where((a, op) => op.eq(a.factorsVersion, u.factorsVersion ?? 0))
            .commit(),
        ),
      ]),
    { codes: listChanged, factors: listChanged },
  );
  return { recovery_codes: codes };
};
