import { checkAssertion, checkRegistration, registrationOptions, requestOptions } from '#lib/auth/webauthn.ts';
import { AppError } from '#lib/core/errors.ts';
import type { FactorItem, UserItem } from '#lib/db/items.ts';
import type { Tx } from '#lib/db/service.ts';
import type { TxItem } from '#lib/db/transactions.ts';
import type { WebauthnChallenge } from '#lib/wire/mfa.ts';
import type { VerifyFactorInput } from '#lib/wire/schemas.ts';
import { type FactorEntry, factorsOf } from './factor-list.ts';

/**
 * A passkey factor's half of a challenge and a verify (step-up.ts holds the rest, shared with
 * TOTP): an unverified factor is registered by a `create` ceremony, a verified one proven by a
 * `request` for its own credential.
 */

type Ceremony = 'create' | 'request';

/** The ceremony a challenge of `entry` asks for, and its options for navigator.credentials. */
export const passkeyCeremony = async (
  u: UserItem,
  entry: FactorEntry,
): Promise<{ challenge: string; webauthn: WebauthnChallenge['webauthn'] }> => {
  if (entry.status === 'unverified' || !entry.credentialId) {
    const registered = factorsOf(u).flatMap((f) => (f.credentialId ? [f.credentialId] : []));
    const publicKey = await registrationOptions(u, registered);
    return { challenge: publicKey.challenge, webauthn: { type: 'create', credential_options: { publicKey: { ...publicKey } } } };
  }
  const publicKey = await requestOptions([entry.credentialId], 'preferred');
  return { challenge: publicKey.challenge, webauthn: { type: 'request', credential_options: { publicKey: { ...publicKey } } } };
};

const ceremonyMismatch = (expected: Ceremony) =>
  new AppError('validation_failed', undefined, {
    fields: {
      webauthn: `must be the answer to this challenge's ${expected} ceremony (navigator.credentials.${expected === 'create' ? 'create' : 'get'})`,
    },
  });

export interface PasskeyProof {
  /** The factor item's new credential or counter, conditional on what was read. */
  writes: (tx: Tx) => TxItem[];
  /** The list entry once proven (a registration names its credential there). */
  entry: FactorEntry;
}

/**
 * Checks a passkey's answer to challenge `asked` for factor `entry` (its item `factor`). A
 * registration stores the credential (once: the factor item must have none yet, and the
 * credential item is created, so one credential serves one account); an assertion moves the
 * counter forward, conditional on the one read (two verifies of one answer: one wins).
 * Throws `validation_failed`, `mfa_verification_failed`.
 */
export const provePasskey = async (
  u: UserItem,
  entry: FactorEntry,
  factor: FactorItem,
  asked: { type: Ceremony; challenge: string },
  input: VerifyFactorInput,
): Promise<PasskeyProof> => {
  const answer = input.webauthn;
  if (!answer || answer.type !== asked.type) throw ceremonyMismatch(asked.type);
  if (answer.type === 'create') {
    const credential = await checkRegistration(answer.credential_response, asked.challenge);
    return {
      entry: { ...entry, credentialId: credential.credentialId },
      writes: (tx) => [
        tx.factor
          .patch({ userUuid: u.userUuid, factorId: entry.id })
          .set({
            credentialId: credential.credentialId,
            publicKey: credential.publicKey,
            counter: credential.counter,
            ...(credential.transports ? { transports: credential.transports } : {}),
          })
          .where((a, op) => op.notExists(a.credentialId))
          .commit(),
        tx.passkeyCredential
          .create({ credentialId: credential.credentialId, userUuid: u.userUuid, factorId: entry.id, createdAt: entry.createdAt })
          .commit(),
      ],
    };
  }
  if (!factor.credentialId || !factor.publicKey) throw new AppError('mfa_verification_failed', 'This passkey was never registered.');
  const stored = {
    credentialId: factor.credentialId,
    publicKey: factor.publicKey,
    counter: factor.counter ?? 0,
    transports: factor.transports,
  };
  const { counter } = await checkAssertion(answer.credential_response, asked.challenge, stored, false);
  return { entry, writes: (tx) => [counterWrite(tx, u.userUuid, entry.id, stored.counter, counter)] };
};

/** The factor's counter moves from `seen` to `counter`, only while it is still `seen`. */
export const counterWrite = (tx: Tx, userUuid: string, factorId: string, seen: number, counter: number) =>
  tx.factor
    .patch({ userUuid, factorId })
    .set({ counter })
    .where((a, op) => op.eq(a.counter, seen))
    .commit();
