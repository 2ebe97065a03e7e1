import { randomBytes } from 'node:crypto';
import { createTOTPKeyURI, verifyHOTP } from '@oslojs/otp';
import { renderSVG } from 'uqr';

/**
 * TOTP (RFC 6238) as every authenticator app reads it: SHA-1, 6 digits, 30-second steps, a
 * 160-bit key (RFC 4226's recommended length). The code itself is @oslojs/otp's; what is ours is
 * which steps count and that a step counts once.
 */
export const TOTP_PERIOD_SECONDS = 30;
export const TOTP_DIGITS = 6;
/** Steps either side of now a code may come from: phones whose clocks drift by up to 30 s still work. */
export const TOTP_SKEW_STEPS = 1;

export const newTotpKey = (): Uint8Array => new Uint8Array(randomBytes(20));

/** The `otpauth://totp/…` URI an authenticator app scans, and its QR code as an SVG document. */
export const totpEnrolment = (issuer: string, account: string, key: Uint8Array) => {
  const uri = createTOTPKeyURI(issuer, account, key, TOTP_PERIOD_SECONDS, TOTP_DIGITS);
  return { uri, secret: new URL(uri).searchParams.get('secret') ?? '', qrCode: renderSVG(uri, { border: 2 }) };
};

/** The time step of `at`. */
export const totpStep = (at: Date): number => Math.floor(at.getTime() / 1000 / TOTP_PERIOD_SECONDS);

/**
 * The step whose code `code` is, among the steps within TOTP_SKEW_STEPS of `now` that come after
 * `lastStep` (the last one used: a code works once, and never an older one after it), or null.
 * Every candidate is compared (in constant time each), so the answer's time says nothing of which matched.
 */
export const matchTotp = (key: Uint8Array, code: string, now: Date, lastStep: number | undefined): number | null => {
  const current = totpStep(now);
  let matched: number | null = null;
  for (let step = current - TOTP_SKEW_STEPS; step <= current + TOTP_SKEW_STEPS; step++) {
    const ok = verifyHOTP(key, BigInt(step), TOTP_DIGITS, code);
    if (ok && matched === null && (lastStep === undefined || step > lastStep)) matched = step;
  }
  return matched;
};
