import type {
  AuthenticatorTransport,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
} from '@simplewebauthn/server';
import { config } from '#lib/core/config.ts';
import { AppError } from '#lib/core/errors.ts';
import type { AssertionAnswerInput, RegistrationAnswerInput } from '#lib/wire/schemas.ts';

/**
 * Passkeys (WebAuthn) through @simplewebauthn/server: the ceremonies' options, and the checks of
 * an authenticator's answers against this deployment's relying party id and origins
 * (`PASSKEY_RP_ID`, `PASSKEY_ORIGINS`; docs/mfa.md). Loaded on first use, so functions that only
 * ever see TOTP factors do not evaluate it.
 */
const library = () => import('@simplewebauthn/server');

/** How long a browser waits for the authenticator (the challenge itself lasts CHALLENGE_SECONDS). */
const TIMEOUT_MS = 120_000;

/** Why an answer is refused, as the library says it: nothing secret, and it tells a developer what to fix. */
const refused = (error: unknown): AppError =>
  new AppError('mfa_verification_failed', `The passkey's answer does not check: ${error instanceof Error ? error.message : 'refused'}`);

/**
 * GoTrue's `rpId` and `rpOrigins`, which auth-js sends from the page it runs on: the relying party
 * is a deploy option here, so they may only name it (a page elsewhere gets a clear 422 rather than
 * an answer that can never check). Throws `validation_failed`.
 */
export const checkRelyingParty = (named: { rpId?: string | undefined; rpOrigins?: string[] | undefined } | undefined): void => {
  if (named?.rpId !== undefined && named.rpId !== config.passkeyRpId)
    throw new AppError('validation_failed', undefined, {
      fields: { 'webauthn.rpId': `must be ${config.passkeyRpId}, this deployment's relying party` },
    });
  const stranger = named?.rpOrigins?.find((origin) => !config.passkeyOrigins.includes(origin));
  if (stranger !== undefined)
    throw new AppError('validation_failed', undefined, {
      fields: { 'webauthn.rpOrigins': `${stranger} is not one of this deployment's passkey origins (${config.passkeyOrigins.join(', ')})` },
    });
};

export interface StoredCredential {
  credentialId: string;
  /** COSE public key, base64url. */
  publicKey: string;
  counter: number;
  transports?: string[] | undefined;
}

/**
 * Options for registering a passkey of `user` (navigator.credentials.create): a discoverable
 * credential (so it can sign in alone), attestation `none`, and none of `exclude` (the account's
 * passkeys already, so one authenticator is not registered twice).
 */
export const registrationOptions = async (
  user: { userUuid: string; email: string },
  exclude: string[],
): Promise<PublicKeyCredentialCreationOptionsJSON> => {
  const { generateRegistrationOptions } = await library();
  return generateRegistrationOptions({
    rpName: config.passkeyRpName,
    rpID: config.passkeyRpId,
    userName: user.email,
    userID: new TextEncoder().encode(user.userUuid),
    attestationType: 'none',
    timeout: TIMEOUT_MS,
    excludeCredentials: exclude.map((id) => ({ id })),
    authenticatorSelection: { residentKey: 'required', userVerification: 'preferred' },
  });
};

/**
 * Options for proving a passkey (navigator.credentials.get): one of `allow`, or with none listed
 * any discoverable one the authenticator holds for this relying party (a sign-in with it alone).
 */
export const requestOptions = async (
  allow: string[],
  userVerification: 'required' | 'preferred',
): Promise<PublicKeyCredentialRequestOptionsJSON> => {
  const { generateAuthenticationOptions } = await library();
  return generateAuthenticationOptions({
    rpID: config.passkeyRpId,
    allowCredentials: allow.map((id) => ({ id })),
    userVerification,
    timeout: TIMEOUT_MS,
  });
};

/**
 * Checks a registration answer for `challenge` and returns the credential to store. The user
 * need not be verified: the session registering it proved the account already. Throws
 * `mfa_verification_failed`.
 */
export const checkRegistration = async (answer: RegistrationAnswerInput, challenge: string): Promise<StoredCredential> => {
  const { verifyRegistrationResponse } = await library();
  const { transports, ...response } = answer.response;
  const result = await verifyRegistrationResponse({
    response: {
      ...answer,
      response: { ...response, ...(transports ? { transports: transports as AuthenticatorTransport[] } : {}) },
      clientExtensionResults: answer.clientExtensionResults ?? {},
    },
    expectedChallenge: challenge,
    expectedOrigin: config.passkeyOrigins,
    expectedRPID: config.passkeyRpId,
    requireUserVerification: false,
  }).catch((error: unknown) => {
    throw refused(error);
  });
  if (!result.verified) throw refused(undefined);
  const { credential } = result.registrationInfo;
  // The id stored is the one inside the signed authenticator data: it must be the answer's own id,
  // which the schema bounds (a longer one would not fit a DynamoDB key, nor ever sign in).
  if (credential.id !== answer.id) throw refused(new Error("the credential id in the authenticator's data is not the answer's id"));
  return {
    credentialId: credential.id,
    publicKey: Buffer.from(credential.publicKey).toString('base64url'),
    counter: credential.counter,
    transports: credential.transports,
  };
};

/**
 * Checks an assertion for `challenge` by `stored`, and returns the counter to store and whether
 * the user was verified (a PIN or biometric on the authenticator). A counter that did not go up
 * (a cloned authenticator, or a replayed answer) is refused, as the WebAuthn spec asks. Throws
 * `mfa_verification_failed`.
 */
export const checkAssertion = async (
  answer: AssertionAnswerInput,
  challenge: string,
  stored: StoredCredential,
  requireUserVerification: boolean,
): Promise<{ counter: number; userVerified: boolean }> => {
  const { verifyAuthenticationResponse } = await library();
  const { userHandle, ...response } = answer.response;
  const result = await verifyAuthenticationResponse({
    response: {
      ...answer,
      response: { ...response, ...(userHandle ? { userHandle } : {}) },
      clientExtensionResults: answer.clientExtensionResults ?? {},
    },
    expectedChallenge: challenge,
    expectedOrigin: config.passkeyOrigins,
    expectedRPID: config.passkeyRpId,
    credential: {
      id: stored.credentialId,
      publicKey: new Uint8Array(Buffer.from(stored.publicKey, 'base64url')),
      counter: stored.counter,
      ...(stored.transports ? { transports: stored.transports as AuthenticatorTransport[] } : {}),
    },
    requireUserVerification,
  }).catch((error: unknown) => {
    throw refused(error);
  });
  if (!result.verified) throw refused(undefined);
  return { counter: result.authenticationInfo.newCounter, userVerified: result.authenticationInfo.userVerified };
};
