import { randomInt } from 'node:crypto';
import { sha256Hex } from '#lib/core/sha256.ts';

/**
 * Recovery codes: ten one-time codes of 16 characters of Crockford's base32 (80 random bits each,
 * shown as four groups of four), so that their SHA-256 is as safe to store as a refresh token's:
 * too many to try offline. Typed back, case, dashes and spaces do not matter, and the letters
 * people confuse with digits (O, I, L) read as those digits.
 */
export const RECOVERY_CODE_COUNT = 10;
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const GROUPS = 4;
const GROUP_LENGTH = 4;

const newCode = (): string =>
  Array.from({ length: GROUPS }, () => Array.from({ length: GROUP_LENGTH }, () => ALPHABET[randomInt(ALPHABET.length)]).join('')).join('-');

export const newRecoveryCodes = (): string[] => Array.from({ length: RECOVERY_CODE_COUNT }, newCode);

/** A typed code as the alphabet spells it, or null when it cannot be one. */
export const normaliseRecoveryCode = (typed: string): string | null => {
  const code = typed.toLowerCase().replace(/[\s-]/gu, '').replace(/o/gu, '0').replace(/[il]/gu, '1');
  return code.length === GROUPS * GROUP_LENGTH && [...code].every((c) => ALPHABET.includes(c)) ? code : null;
};

/** What is stored of a code: the SHA-256 hex of its normal spelling. */
export const hashRecoveryCode = (code: string): string => sha256Hex(normaliseRecoveryCode(code) ?? code);
