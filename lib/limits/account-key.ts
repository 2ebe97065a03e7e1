import { createHash } from 'node:crypto';

/** The SHA-256 of a limit's subject, hex: limit items hold no e-mail or address in clear. */
export const hashed = (text: string): string => createHash('sha256').update(text).digest('hex');

/**
 * The account key of the password limits and the address-mail allowance: the e-mail as sign-in
 * normalises it (trimmed, lowercased), hashed, so unknown e-mails count exactly like known ones.
 */
export const accountSubject = (email: string): string => hashed(email.trim().toLowerCase());
