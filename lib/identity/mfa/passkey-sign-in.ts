import { randomUUID } from 'node:crypto';
import { type ClientInfo, sessionsForCap, trimSessions } from '#lib/auth/session-items.ts';
import { newSession } from '#lib/auth/sessions.ts';
import { checkAssertion, checkRelyingParty, requestOptions } from '#lib/auth/webauthn.ts';
import { config } from '#lib/core/config.ts';
import { AppError } from '#lib/core/errors.ts';
import { log, noteRequest } from '#lib/core/log.ts';
import { EVENT_METRICS } from '#lib/core/metric-names.ts';
import { recordEvent } from '#lib/core/metrics.ts';
import { epochSeconds, isoMillis, signInStamp } from '#lib/core/time.ts';
import { readTogether } from '#lib/db/batch-read.ts';
import type { Db } from '#lib/db/service.ts';
import { commit, named, write } from '#lib/db/transactions.ts';
import { limitSignIn } from '#lib/limits/source-network.ts';
import type { WebauthnChallenge } from '#lib/wire/mfa.ts';
import type { AuthSession } from '#lib/wire/responses.ts';
import type { PasskeySignInInput } from '#lib/wire/schemas.ts';
import { counterWrite } from './passkey-proof.ts';
import { CHALLENGE_SECONDS } from './step-up.ts';

/**
 * Signing in with a passkey alone (docs/mfa.md, "Passkeys"): a challenge for any discoverable
 * passkey of this relying party, then the authenticator's answer, which names its credential.
 */

/**
 * Every refusal of a sign-in answers the same to a caller who has no session yet: nothing about
 * which account a credential is, its counter or its state. The reason goes to the log.
 */
const notThisPasskey = (reason: string) => {
  log.info('passkey sign-in refused', { reason });
  recordEvent(EVENT_METRICS.signInFailed);
  return new AppError('invalid_credentials', 'This passkey does not sign in here: it is unknown, removed, or its answer does not check.');
};
const challengeGone = () => new AppError('mfa_challenge_expired');

/**
 * A sign-in challenge, before any session: the browser asks the authenticator for any passkey of
 * this relying party, with user verification. It costs a token of the source's sign-in bucket (as
 * a password attempt does), since anyone may ask. Throws `rate_limited`, `unavailable`.
 */
export const passkeySignInChallenge = async (db: Db, client: ClientInfo, now: Date): Promise<WebauthnChallenge> => {
  await limitSignIn(db, client.ip, now);
  const publicKey = await requestOptions([], 'required');
  const challengeId = randomUUID();
  const expiresAt = epochSeconds(now) + CHALLENGE_SECONDS;
  await db.entities.passkeyChallenge
    .create({ challengeId, challenge: publicKey.challenge, createdAt: isoMillis(now), expiresAt, ttl: expiresAt })
    .go({ response: 'none' });
  return {
    id: challengeId,
    type: 'webauthn',
    expires_at: expiresAt,
    webauthn: { type: 'request', credential_options: { publicKey: { ...publicKey } } },
  };
};

/**
 * Opens a session for the account whose passkey answered the challenge. The authenticator must
 * have verified its user (a PIN or biometric): with that, a passkey is two factors in one, and the
 * session starts at aal2 (`amr`: `mfa/webauthn`, then `passkey`). One transaction uses the
 * challenge up (a replayed answer finds it gone) and moves the counter forward, conditional on the
 * one read. Throws `validation_failed`, `mfa_challenge_expired`, `invalid_credentials`.
 */
export const signInWithPasskey = async (db: Db, input: PasskeySignInInput, client: ClientInfo, now: Date): Promise<AuthSession> => {
  checkRelyingParty(input.webauthn);
  const answer = input.webauthn.credential_response;
  const [challenge, credential] = await readTogether(db, [
    [db.entities.passkeyChallenge, { challengeId: input.challenge_id }],
    [db.entities.passkeyCredential, { credentialId: answer.id }],
  ] as const);
  if (!challenge || challenge.expiresAt <= epochSeconds(now)) throw challengeGone();
  if (!credential) throw notThisPasskey('unknown credential');
  const [u, factor] = await readTogether(db, [
    [db.entities.user, { userUuid: credential.userUuid }],
    [db.entities.factor, { userUuid: credential.userUuid, factorId: credential.factorId }],
  ] as const);
  const entry = u?.factors?.find((f) => f.id === credential.factorId && f.status === 'verified');
  if (!u || !entry || !factor?.credentialId || !factor.publicKey || factor.credentialId !== answer.id)
    throw notThisPasskey('no verified factor with this credential');
  // The account the authenticator says the passkey is for, when it says: it must be the same one.
  const handle = answer.response.userHandle;
  if (handle && Buffer.from(handle, 'base64url').toString('utf8') !== u.userUuid)
    throw notThisPasskey('the user handle names another account');
  // Concealing accounts, an unconfirmed one signs in no one (as with a password).
  if (config.concealAccounts && u.emailConfirmedAt === undefined) throw notThisPasskey('unconfirmed account');
  const seen = factor.counter ?? 0;
  const { counter } = await checkAssertion(
    answer,
    challenge.challenge,
    { credentialId: factor.credentialId, publicKey: factor.publicKey, counter: seen, transports: factor.transports },
    true,
  ).catch((error: unknown) => {
    throw error instanceof AppError ? notThisPasskey(error.message) : error;
  });

  const signedIn = { ...u, lastSignInAt: signInStamp(now) };
  const session = await newSession(signedIn, client, now, 'passkey', 'mfa/webauthn');
  const [others] = await Promise.all([
    sessionsForCap(db, u.userUuid),
    commit(
      () =>
        write(db, (tx) => [
          named(
            'challenge',
            tx.passkeyChallenge
              .delete({ challengeId: challenge.challengeId })
              .where((a, op) => op.exists(a.challengeId))
              .commit(),
          ),
          // A removal of the passkey racing this sign-in wins: the patch needs the factor item.
          named('counter', counterWrite(tx, u.userUuid, factor.factorId, seen, counter)),
          // A patch: the account must still be there (the counter's patch needs the factor still there).
          named('user', tx.user.patch({ userUuid: u.userUuid }).set({ lastSignInAt: signedIn.lastSignInAt }).commit()),
          named('session', ...session.writes(tx)),
        ]),
      {
        challenge: challengeGone,
        counter: () => notThisPasskey('the counter moved meanwhile'),
        otherwise: () => notThisPasskey('the account or factor changed meanwhile'),
      },
    ),
  ]);
  await trimSessions(db, u.userUuid, others, session.sessionId);
  recordEvent(EVENT_METRICS.signInSucceeded);
  noteRequest({ userId: u.userUuid });
  return session.body;
};
