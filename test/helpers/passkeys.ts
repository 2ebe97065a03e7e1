import type { Api } from './api.ts';
import { SoftAuthenticator } from './soft-authenticator.ts';

/** An authenticator for this process's deployment (its relying party and first origin); config loads only now (see api.ts). */
export const softAuthenticator = async (): Promise<SoftAuthenticator> => {
  const { config } = await import('#lib/core/config.ts');
  return new SoftAuthenticator(config.passkeyOrigins[0] as string, config.passkeyRpId);
};

const expectStatus = (what: string, res: { status: number; body: unknown }, status: number) => {
  if (res.status !== status) throw new Error(`${what}: ${res.status} ${JSON.stringify(res.body)}`);
};

/** A challenge of factor `factorId` in `token`'s session: its id and the options for navigator.credentials. */
export const passkeyChallenge = async (api: Api, token: string, factorId: string) => {
  const res = await api.call('POST', `/api/auth/factors/${factorId}/challenge`, { token });
  expectStatus('challenge', res, 201);
  return {
    challengeId: res.body.data.id as string,
    type: res.body.data.webauthn.type as string,
    publicKey: res.body.data.webauthn.credential_options.publicKey,
  };
};

/**
 * Enrols and registers a passkey on `authenticator` for `token`'s account (enrol, challenge,
 * create, verify): the factor, the credential, and the verify's reply (an aal2 session).
 */
export const registerPasskey = async (api: Api, token: string, authenticator: SoftAuthenticator, name = 'Laptop') => {
  const enrolled = await api.call('POST', '/api/auth/factors', { token, json: { factor_type: 'webauthn', friendly_name: name } });
  expectStatus('enrol', enrolled, 201);
  const factorId = enrolled.body.data.id as string;
  const { challengeId, publicKey } = await passkeyChallenge(api, token, factorId);
  const credential = authenticator.create(publicKey);
  const verified = await api.call('POST', `/api/auth/factors/${factorId}/verify`, {
    token,
    json: { challenge_id: challengeId, webauthn: { type: 'create', credential_response: credential } },
  });
  expectStatus('verify', verified, 200);
  return { factorId, credentialId: credential.id, verified };
};

/** A passkey sign-in challenge: its id and the options for navigator.credentials.get. */
export const signInChallenge = async (api: Api) => {
  const res = await api.call('POST', '/api/auth/passkeys/challenge');
  expectStatus('sign-in challenge', res, 201);
  return { challengeId: res.body.data.id as string, publicKey: res.body.data.webauthn.credential_options.publicKey };
};

/** Signs in with a passkey of `authenticator` (options as `get` takes them): the reply. */
export const signInWithPasskey = async (
  api: Api,
  authenticator: SoftAuthenticator,
  answer: Parameters<SoftAuthenticator['get']>[1] = {},
) => {
  const { challengeId, publicKey } = await signInChallenge(api);
  return api.call('POST', '/api/auth/passkeys/sign-in', {
    json: { challenge_id: challengeId, webauthn: { type: 'request', credential_response: authenticator.get(publicKey, answer) } },
  });
};
