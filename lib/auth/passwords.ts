import { argon2, randomBytes, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';

/**
 * argon2id at OWASP's first recommendation (m = 19 MiB, t = 2, p = 1), from Node's own crypto
 * (OpenSSL): no native addon, so the same bundle runs on arm64 and x86_64 Lambdas. Stored in PHC
 * form, so parameters can be raised later and old hashes still verify.
 */
const PARAMS = { memory: 19456, passes: 2, parallelism: 1, tagLength: 32 } as const;
const derive = promisify(argon2);
const b64 = (bytes: Buffer): string => bytes.toString('base64').replace(/=+$/, '');

export const hashPassword = async (password: string): Promise<string> => {
  const nonce = randomBytes(16);
  const hash = await derive('argon2id', { message: password, nonce, ...PARAMS });
  return `$argon2id$v=19$m=${PARAMS.memory},t=${PARAMS.passes},p=${PARAMS.parallelism}$${b64(nonce)}$${b64(hash)}`;
};

const PHC = /^\$argon2id\$v=19\$m=(\d+),t=(\d+),p=(\d+)\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/;

export const verifyPassword = async (stored: string, password: string): Promise<boolean> => {
  const match = PHC.exec(stored);
  if (!match) return false;
  const [, memory, passes, parallelism, salt, expectedB64] = match as unknown as [string, string, string, string, string, string];
  const expected = Buffer.from(expectedB64, 'base64');
  const actual = await derive('argon2id', {
    message: password,
    nonce: Buffer.from(salt, 'base64'),
    memory: Number(memory),
    passes: Number(passes),
    parallelism: Number(parallelism),
    tagLength: expected.length,
  });
  return timingSafeEqual(actual, expected);
};

/** The hash of 32 random bytes that were thrown away: no password verifies against it. */
const DUMMY_HASH = '$argon2id$v=19$m=19456,t=2,p=1$1EeJGLJ55n9x0p52yIaiCQ$EJkeF2U1L8Kb9eLxJHo2v23QeoxK/Q9xlV0K/6xkO7U';

/**
 * Verifies against a hash with the same parameters, so a sign-in for an unknown e-mail spends
 * the same time as one with a wrong password (a constant, so a cold start costs no extra hash).
 */
export const spendVerifyTime = async (password: string): Promise<void> => {
  await verifyPassword(DUMMY_HASH, password);
};
