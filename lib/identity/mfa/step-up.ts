import { randomUUID } from 'node:crypto';
import { seal, unseal } from '#lib/auth/factor-seal.ts';
import { hashRecoveryCode, newRecoveryCodes } from '#lib/auth/recovery-codes.ts';
import { type Claims, endOtherSessionsAfter, readAsActor, requireAal2 } from '#lib/auth/session-items.ts';
import { raiseSession } from '#lib/auth/sessions.ts';
import { matchTotp } from '#lib/auth/totp.ts';
import { checkRelyingParty } from '#lib/auth/webauthn.ts';
import { AppError, notFound } from '#lib/core/errors.ts';
import { epochSeconds, isoMillis } from '#lib/core/time.ts';
import type { FactorItem, MfaChallengeItem, UserItem } from '#lib/db/items.ts';
import type { Db, Tx } from '#lib/db/service.ts';
import { commit, named, write } from '#lib/db/transactions.ts';
import type { BucketToken } from '#lib/limits/token-bucket.ts';
import { forgiveMfaGuess, takeMfaGuess } from '#lib/limits/mfa-attempts.ts';
import type { Challenge } from '#lib/wire/mfa.ts';
import type { ChallengeInput, VerifyFactorInput } from '#lib/wire/schemas.ts';
import type { StepUp } from '#lib/wire/responses.ts';
import { ADD_FROM_AAL2, type FactorEntry, NO_FACTOR, factorNamed, factorsOf, listChanged, writeFactorList } from './factor-list.ts';
import { hasVerifiedFactor } from '../account.ts';
import { accountMessage } from '../verification.ts';
import { sealBinding } from './factors.ts';
import { type PasskeyProof, passkeyCeremony, provePasskey } from './passkey-proof.ts';

/** A challenge takes a code for this long (GoTrue's default too). */
export const CHALLENGE_SECONDS = 300;

const wrongCode = () => new AppError('mfa_verification_failed');
const challengeGone = () => new AppError('mfa_challenge_expired');
const passkeySpent = () => new AppError('mfa_verification_failed', 'This answer was used already, or this passkey is registered already.');

/**
 * A challenge of one of the caller's factors, for this session: a verify must answer it within
 * CHALLENGE_SECONDS. A passkey's carries the options for navigator.credentials (a `create`
 * ceremony registers an unverified one). Throws `unauthorized`, `not_found`, `validation_failed`.
 */
export const challengeFactor = async (db: Db, claims: Claims, factorId: string, input: ChallengeInput, now: Date): Promise<Challenge> => {
  checkRelyingParty(input.webauthn);
  const {
    actor,
    items: [u],
  } = await readAsActor(db, claims, (userUuid) => [[db.entities.user, { userUuid }]] as const);
  if (!u) throw new AppError('unauthorized');
  const entry = factorNamed(u, factorId);
  const ceremony = entry.type === 'webauthn' ? await passkeyCeremony(u, entry) : undefined;
  const challengeId = randomUUID();
  const expiresAt = epochSeconds(now) + CHALLENGE_SECONDS;
  await db.entities.mfaChallenge
    .create({
      challengeId,
      userUuid: u.userUuid,
      sessionId: actor.sessionId,
      factorId,
      ...(ceremony ? { webauthn: { type: ceremony.webauthn.type, challenge: ceremony.challenge } } : {}),
      createdAt: isoMillis(now),
      expiresAt,
      ttl: expiresAt,
    })
    .go({ response: 'none' });
  if (!ceremony) return { id: challengeId, type: 'totp', expires_at: expiresAt };
  return { id: challengeId, type: 'webauthn', expires_at: expiresAt, webauthn: ceremony.webauthn };
};

/** What a TOTP code proves: its step, stored so that it (and any older one) never works again. Throws `validation_failed`, `mfa_verification_failed`, `rate_limited`. */
const proveTotp = async (db: Db, u: UserItem, factor: FactorItem, input: VerifyFactorInput, now: Date) => {
  if (input.code === undefined)
    throw new AppError('validation_failed', undefined, { fields: { code: 'must be the six digits the app shows' } });
  if (!factor.sealedSecret) throw notFound(NO_FACTOR);
  const guess = await takeMfaGuess(db, u.userUuid, factor.factorId, now);
  const binding = sealBinding(u.userUuid, factor.factorId);
  const { secret, stale } = await unseal(factor.sealedSecret, binding);
  const step = matchTotp(secret, input.code, now, factor.lastStep);
  if (step === null) throw wrongCode();
  const resealed = stale ? await seal(secret, binding) : undefined;
  return {
    guess,
    writes: (tx: Tx) => [
      tx.factor
        .patch({ userUuid: u.userUuid, factorId: factor.factorId })
        .set({ lastStep: step, ...(resealed ? { sealedSecret: resealed } : {}) })
        .where((a, op) => `${op.notExists(a.lastStep)} OR ${op.lt(a.lastStep, step)}`)
        .commit(),
    ],
  };
};

/** What proves the factor, by its type: guesses to give back once it worked, the factor item's writes, its list entry. */
const proveFactor = async (
  db: Db,
  u: UserItem,
  entry: FactorEntry,
  factor: FactorItem,
  challenge: MfaChallengeItem,
  input: VerifyFactorInput,
  now: Date,
): Promise<PasskeyProof & { guess: BucketToken[] }> => {
  if (entry.type === 'totp') return { entry, ...(await proveTotp(db, u, factor, input, now)) };
  if (!challenge.webauthn) throw challengeGone();
  return { guess: [], ...(await provePasskey(u, entry, factor, challenge.webauthn, input)) };
};

/**
 * Verifies a code from a factor, or a passkey's answer, for its challenge and raises the caller's
 * session to aal2. A code's guess is admitted first (5 then 1 a minute per factor, 10 an hour per
 * account; a right code gives its tokens back); a passkey's answer is a signature, not a guess.
 * One transaction then uses the challenge up, moves the factor's last used step (a passkey's
 * counter) forward (so the same code, or an older one, never works again: two verifies of one
 * code race on that condition and one loses), raises the session and, for a factor's first code,
 * marks it verified (from aal2 only, when the account has a verified factor already); the first
 * verified factor of an account also gets its recovery codes, which this answer shows once, and
 * takes the account's other unverified factors away. Activating a factor ends the account's other
 * sessions (they proved nothing new). The session's older refresh tokens stop working. Throws
 * `unauthorized`, `not_found`, `validation_failed`, `mfa_challenge_expired`, `mfa_verification_failed`,
 * `rate_limited`, `conflict`, `unavailable`.
 */
export const verifyFactor = async (db: Db, claims: Claims, factorId: string, input: VerifyFactorInput, now: Date): Promise<StepUp> => {
  const {
    actor,
    session,
    items: [u, factor, challenge],
  } = await readAsActor(
    db,
    claims,
    (userUuid) =>
      [
        [db.entities.user, { userUuid }],
        [db.entities.factor, { userUuid, factorId }],
        [db.entities.mfaChallenge, { challengeId: input.challenge_id }],
      ] as const,
  );
  if (!u) throw new AppError('unauthorized');
  const entry = factorNamed(u, factorId);
  if (!factor) throw notFound(NO_FACTOR);
  // Verifying a factor adds it: once one is verified, only a session that proved it may add another
  // (an unverified factor a password thief set up earlier must not become theirs from aal1).
  if (entry.status === 'unverified' && hasVerifiedFactor(u)) requireAal2(actor, ADD_FROM_AAL2);
  const ours = challenge?.userUuid === u.userUuid && challenge.sessionId === actor.sessionId && challenge.factorId === factorId;
  if (!ours || challenge.expiresAt <= epochSeconds(now)) throw challengeGone();
  checkRelyingParty(input.webauthn);

  const stamp = isoMillis(now);
  const activating = entry.status === 'unverified';
  const proof = await proveFactor(db, u, entry, factor, challenge, input, now);
  const first = activating && !hasVerifiedFactor(u);
  const codes = first ? newRecoveryCodes() : undefined;
  // The account's first factor: any other unverified one goes (someone may have set it up with the
  // password alone), as GoTrue does.
  const dropped = first ? factorsOf(u).filter((f) => f.id !== factorId) : [];
  const verified = { ...proof.entry, status: 'verified' as const, updatedAt: stamp };
  const factors = first ? [verified] : factorsOf(u).map((f) => (f.id === factorId && activating ? verified : f));
  const raised = await raiseSession(
    { ...u, factors } satisfies UserItem,
    session,
    entry.type === 'webauthn' ? 'mfa/webauthn' : 'totp',
    now,
  );
  await commit(
    () =>
      write(db, (tx) => [
        named(
          'challenge',
          tx.mfaChallenge
            .delete({ challengeId: challenge.challengeId })
            .where((a, op) => op.exists(a.challengeId))
            .commit(),
        ),
        named('factor', ...proof.writes(tx)),
        named('session', ...raised.writes(tx)),
        named(
          'list',
          ...(activating ? [writeFactorList(tx, u, factors, stamp)] : []),
          ...dropped.map((f) => tx.factor.delete({ userUuid: u.userUuid, factorId: f.id }).commit()),
        ),
        // The owner is told of every factor added: whoever has the password alone can add the first.
        named(
          'notice',
          ...(activating
            ? [tx.outboxMessage.create(accountMessage('factor_added', { userUuid: u.userUuid, address: u.email }, now)).commit()]
            : []),
        ),
        named(
          'codes',
          ...(codes
            ? [tx.recoveryCodes.put({ userUuid: u.userUuid, hashes: codes.map(hashRecoveryCode), createdAt: stamp }).commit()]
            : []),
        ),
      ]),
    // The challenge used, or the step taken, by a verify that won the race: this code is spent.
    {
      challenge: challengeGone,
      factor: entry.type === 'webauthn' ? passkeySpent : wrongCode,
      session: () => new AppError('unauthorized'),
      list: listChanged,
      codes: listChanged,
      notice: listChanged,
    },
  );
  await forgiveMfaGuess(db, proof.guess);
  if (activating) await endOtherSessionsAfter(db, u.userUuid, actor.sessionId);
  return { ...raised.body, ...(codes ? { recovery_codes: codes } : {}) };
};
