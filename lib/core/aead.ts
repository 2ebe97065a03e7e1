import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * AES-256-GCM as Roster seals things (list cursors, a refresh token's successor, second-factor
 * secrets): a random 12-byte nonce, the ciphertext, the 16-byte tag, in one buffer; `aad`, when
 * given, is what the sealed bytes are bound to (they open for that only). With random nonces one
 * key may seal about 2^32 times before a repeat is worth naming.
 */
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

export const sealBytes = (key: Buffer, plain: Uint8Array, aad?: string): Buffer => {
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, nonce, { authTagLength: TAG_BYTES });
  if (aad !== undefined) cipher.setAAD(Buffer.from(aad, 'utf8'));
  return Buffer.concat([nonce, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
};

/** The plain bytes of `sealed`; throws when it was not sealed by `key` for `aad`, or was changed. */
export const openBytes = (key: Buffer, sealed: Buffer, aad?: string): Buffer => {
  if (sealed.length < NONCE_BYTES + TAG_BYTES) throw new Error('too short to be sealed');
  const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, NONCE_BYTES), { authTagLength: TAG_BYTES });
  if (aad !== undefined) decipher.setAAD(Buffer.from(aad, 'utf8'));
  decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
  return Buffer.concat([decipher.update(sealed.subarray(NONCE_BYTES, sealed.length - TAG_BYTES)), decipher.final()]);
};
