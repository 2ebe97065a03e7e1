import { createHash } from 'node:crypto';

/** The SHA-256 of a text, hex: what the table keeps of secrets and of limit subjects (hex survives ElectroDB's key lowercasing). */
export const sha256Hex = (text: string): string => createHash('sha256').update(text).digest('hex');

/** RFC 7636's S256: base64url of a PKCE verifier's SHA-256, as its challenge. */
export const s256 = (verifier: string): string => createHash('sha256').update(verifier).digest('base64url');
