import { randomBytes } from 'node:crypto';
import { sha256Hex } from '#lib/core/sha256.ts';

/**
 * Opaque tokens (refresh tokens, the tokens of mailed links): 256 random bits, URL-safe. Only the
 * SHA-256 hex of one is ever stored (hex survives ElectroDB's key lowercasing), so the table alone
 * never lets anyone present one.
 */
export const newOpaqueToken = (): string => randomBytes(32).toString('base64url');

export const hashOpaqueToken = sha256Hex;
