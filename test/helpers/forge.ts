import { type CryptoKey, SignJWT } from 'jose';
import { currentSigningKey } from '#lib/auth/signing.ts';

export interface Forgery {
  header?: Record<string, unknown>;
  claims?: Record<string, unknown>;
  omit?: string[];
  /** Another signing key (the header's alg must fit it). */
  key?: CryptoKey | Uint8Array;
}

/**
 * A token signed with jose like the server's (our current key and kid) over `base` claims, with
 * the changes given; with none, the verifier accepts it. The JWT attack tests build on this.
 */
export const forgeToken = async (
  base: Record<string, unknown>,
  { header = {}, claims = {}, omit = [], key }: Forgery = {},
): Promise<string> => {
  const payload = Object.fromEntries(Object.entries({ ...base, ...claims }).filter(([name]) => !omit.includes(name)));
  const signer = await currentSigningKey();
  return new SignJWT(payload).setProtectedHeader({ alg: signer.alg, typ: 'at+jwt', kid: signer.kid, ...header }).sign(key ?? signer.key);
};
