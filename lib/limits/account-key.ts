import { sha256Hex } from '#lib/core/sha256.ts';

/**
 * The account key of the password limits and the address-mail allowance: the e-mail as sign-in
 * normalises it (trimmed, lowercased), hashed, so unknown e-mails count exactly like known ones
 * and limit items hold no e-mail in clear.
 */
/** An address as sign-up stores and compares it (CONTRACT.md: trimmed, case-insensitive). */
export const normaliseEmail = (email: string): string => email.trim().toLowerCase();

export const accountSubject = (email: string): string => sha256Hex(normaliseEmail(email));
