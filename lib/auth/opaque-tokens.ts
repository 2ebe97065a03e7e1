import { createHash, randomBytes } from 'node:crypto';

/**
 * Opaque tokens (refresh tokens, the tokens of mailed links): 256 random bits, URL-safe. Only the
 * SHA-256 hex of one is ever stored (hex survives ElectroDB's key lowercasing), so the table alone
 * never lets anyone present one.
 */
export const newOpaqueToken = (): string => randomBytes(32).toString('base64url');

export const hashOpaqueToken = (token: string): string => createHash('sha256').update(token).digest('hex');
