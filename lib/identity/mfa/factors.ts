import { randomUUID } from 'node:crypto';
import { seal } from '#lib/auth/factor-seal.ts';
import { type Claims, endOtherSessionsAfter, readAsActor, requireAal2 } from '#lib/auth/session-items.ts';
import { newTotpKey, totpEnrolment } from '#lib/auth/totp.ts';
import { config } from '#lib/core/config.ts';
import { AppError } from '#lib/core/errors.ts';
import { isoMillis } from '#lib/core/time.ts';
import type { Db } from '#lib/db/service.ts';
import type { Enrolment, Factor } from '#lib/wire/mfa.ts';
import type { EnrolInput } from '#lib/wire/schemas.ts';
import { factorView } from '#lib/wire/views.ts';
import { ADD_FROM_AAL2, type FactorEntry, MAX_FACTORS, changeFactorList, factorNamed, factorsOf } from './factor-list.ts';
import { hasVerifiedFactor } from '../account.ts';

/** The caller's user item, read with the session. Throws `unauthorized`. */
const readOwn = async (db: Db, claims: Claims) => {
  const {
    actor,
    items: [u],
  } = await readAsActor(db, claims, (userUuid) => [[db.entities.user, { userUuid }]] as const);
  if (!u) throw new AppError('unauthorized');
  return { actor, u };
};

/** The additional data that binds a sealed TOTP key to its factor (lib/auth/factor-seal.ts). */
export const sealBinding = (userUuid: string, factorId: string): string => `totp ${userUuid} ${factorId}`;

/** Who the authenticator app says the codes are for: `issuer` as asked, else this deployment's host. */
const issuerOf = (asked: string | undefined): string => asked ?? new URL(config.publicUrl).hostname;

/**
 * Sets up a factor, unverified until it is proven once (step-up.ts): a TOTP key, answered once
 * here and stored only sealed, or a passkey, registered by its first challenge's `create` answer.
 * An account that has a verified factor already adds another only from an aal2 session: a stolen
 * password alone must not add a thief's factor.
 * Throws `unauthorized`, `mfa_required`, `too_many_factors`, `conflict`, `unavailable`.
 */
export const enrolFactor = async (db: Db, claims: Claims, input: EnrolInput, now: Date): Promise<Enrolment> => {
  const { actor, u: read } = await readOwn(db, claims);
  const factorId = randomUUID();
  const type = input.factor_type;
  const key = type === 'totp' ? newTotpKey() : undefined;
  const sealedSecret = key ? await seal(key, sealBinding(read.userUuid, factorId)) : undefined;
  const stamp = isoMillis(now);
  const name = input.friendly_name ?? '';
  const u = await changeFactorList(db, read, stamp, (current) => {
    if (hasVerifiedFactor(current)) requireAal2(actor, ADD_FROM_AAL2);
    if (factorsOf(current).length >= MAX_FACTORS) throw new AppError('too_many_factors');
    return {
      factors: [...factorsOf(current), { id: factorId, type, name, status: 'unverified', createdAt: stamp, updatedAt: stamp }],
      also: (tx) => [
        tx.factor
          .create({ userUuid: current.userUuid, factorId, type, ...(sealedSecret ? { sealedSecret } : {}), createdAt: stamp })
          .commit(),
      ],
    };
  });
  if (!key) return { id: factorId, type: 'webauthn', friendly_name: name };
  const { uri, secret, qrCode } = totpEnrolment(issuerOf(input.issuer), u.email, key);
  return { id: factorId, type: 'totp', friendly_name: name, totp: { qr_code: qrCode, secret, uri } };
};

/** The caller's factors, verified or not. Throws `unauthorized`. */
export const listFactors = async (db: Db, claims: Claims): Promise<Factor[]> => factorsOf((await readOwn(db, claims)).u).map(factorView);

/** A new name for one of the caller's factors. Throws `unauthorized`, `not_found`, `conflict`. */
export const renameFactor = async (db: Db, claims: Claims, factorId: string, name: string, now: Date): Promise<Factor> => {
  const { u: read } = await readOwn(db, claims);
  const stamp = isoMillis(now);
  let renamed: FactorEntry | undefined;
  await changeFactorList(db, read, stamp, (current) => {
    renamed = { ...factorNamed(current, factorId), name, updatedAt: stamp };
    const entry = renamed;
    return { factors: factorsOf(current).map((f) => (f.id === factorId ? entry : f)), also: () => [] };
  });
  return factorView(renamed as FactorEntry);
};

/**
 * Removes one of the caller's factors. A verified one only from an aal2 session (a recovery code
 * raises a session to aal2 when the factor is lost). The factor's secret, and with the last
 * verified factor the recovery codes and the caller's session's aal2 (nothing is left to prove),
 * go in the same transaction; then every other session of the account ends (docs/mfa.md,
 * "Sessions"). While a verified factor is left, the caller's session keeps its level.
 * Throws `unauthorized`, `not_found`, `mfa_required`, `conflict`.
 */
export const removeFactor = async (db: Db, claims: Claims, factorId: string, now: Date): Promise<{ id: string }> => {
  const { actor, u: read } = await readOwn(db, claims);
  let verified = false;
  await changeFactorList(db, read, isoMillis(now), (current) => {
    const entry = factorNamed(current, factorId);
    verified = entry.status === 'verified';
    if (verified) requireAal2(actor);
    const left = factorsOf(current).filter((f) => f.id !== factorId);
    const lastVerified = verified && !left.some((f) => f.status === 'verified');
    return {
      factors: left,
      also: (tx) => [
        tx.factor.delete({ userUuid: current.userUuid, factorId }).commit(),
        // A passkey signs in no one once its factor is gone.
        ...(entry.credentialId ? [tx.passkeyCredential.delete({ credentialId: entry.credentialId }).commit()] : []),
        ...(lastVerified
          ? [
              tx.recoveryCodes.delete({ userUuid: current.userUuid }).commit(),
              // Nothing is left to prove: this session is aal1 again (its tokens too, through readAsActor).
              tx.session
                .patch({ userUuid: actor.userUuid, sessionId: actor.sessionId })
                .remove(['aal', 'secondMethod', 'secondAt'])
                .commit(),
            ]
          : []),
      ],
    };
  });
  if (verified) await endOtherSessionsAfter(db, actor.userUuid, actor.sessionId);
  return { id: factorId };
};
