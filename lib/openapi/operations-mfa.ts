import type { RouteName } from '#lib/http/routes.ts';
import { GoTrueStepUpSchema } from '#lib/wire/gotrue.ts';
import {
  ChallengeSchema,
  FactorListSchema,
  FactorRemovedSchema,
  FactorSchema,
  RecoveryCodesSchema,
  TotpEnrolmentSchema,
} from '#lib/wire/mfa.ts';
import { StepUpSchema } from '#lib/wire/responses.ts';
import { type Operation, WRITES } from './operation.ts';

const CODE = { challenge_id: '0195f1d2-7c3a-7b8e-9f10-2a3b4c5d6e7f', code: '123456' };

/** The words of the second-factor routes, in the seed's style and GoTrue's (docs/mfa.md). */
export const MFA_OPERATIONS = {
  'auth-factors-list': {
    tag: 'Second factors',
    summary: 'My factors',
    description: 'Every factor of the signed-in account, verified or not (also `factors` on the user).',
    success: { data: FactorListSchema },
    errors: [],
  },
  'auth-factors-enrol': {
    tag: 'Second factors',
    summary: 'Set up a TOTP factor',
    description:
      "Answers the new factor's key once: `totp.secret` (base32), `totp.uri` (`otpauth://`) and `totp.qr_code` (an SVG document) for an authenticator app. The factor is `unverified` until a code from it is verified (challenge, then verify), which also answers the recovery codes when it is the first. With a verified factor already, only an aal2 session may add another (403 `mfa_required`); at most 10 factors (422 `too_many_factors`). `Idempotency-Key` is not honoured: the answer holds a secret, so it is never stored.",
    success: { data: TotpEnrolmentSchema },
    errors: ['mfa_required', 'too_many_factors', ...WRITES],
    example: { factor_type: 'totp', friendly_name: 'Phone' },
  },
  'auth-factors-rename': {
    tag: 'Second factors',
    summary: 'Rename a factor',
    success: { data: FactorSchema },
    errors: WRITES,
    example: { friendly_name: 'Work phone' },
  },
  'auth-factors-delete': {
    tag: 'Second factors',
    summary: 'Remove a factor',
    description:
      'A verified factor only from an aal2 session (403 `mfa_required`; a recovery code raises a session to aal2 when the factor is lost). Every other session of the account ends; the last verified factor takes the recovery codes with it.',
    success: { data: FactorRemovedSchema },
    errors: ['mfa_required', ...WRITES],
  },
  'auth-factors-challenge': {
    tag: 'Second factors',
    summary: 'Challenge a factor',
    description: 'A challenge for this session, which `verify` must name within 5 minutes (`expires_at`, in seconds since the epoch).',
    success: { data: ChallengeSchema },
    errors: [],
  },
  'auth-factors-verify': {
    tag: 'Second factors',
    summary: 'Verify a code (step up to aal2)',
    description:
      "Checks a code from the factor for its challenge, and raises this session to aal2: the answer is a new `data.session` (`aal: \"aal2\"` in the access token, `amr` listing `totp` and the sign-in). A code works once, and no older one after it (422 `mfa_verification_failed`); a used or expired challenge is 410 `mfa_challenge_expired`. Guesses: 5 then 1 a minute per factor, 10 an hour per account (429 with `Retry-After`); a right code does not count. A factor's first code verifies it (once the account has a verified factor, only from an aal2 session: 403 `mfa_required`), ends the account's other sessions and retires this session's older refresh tokens; the account's first factor answers ten `recovery_codes`, shown only this once, and takes the account's other unverified factors away. `Idempotency-Key` is not honoured.",
    success: { data: StepUpSchema },
    errors: ['mfa_required', 'mfa_challenge_expired', 'mfa_verification_failed', 'rate_limited', ...WRITES],
    example: CODE,
  },
  'auth-recovery-codes-create': {
    tag: 'Second factors',
    summary: 'New recovery codes',
    description:
      'Ten new codes in place of the old ones, shown once; only from an aal2 session of an account with a verified factor (403 `mfa_required`).',
    success: { data: RecoveryCodesSchema },
    errors: ['mfa_required', ...WRITES],
  },
  'auth-recovery-codes-verify': {
    tag: 'Second factors',
    summary: 'Use a recovery code',
    description:
      "In place of a lost factor: raises this session to aal2 (`amr` says `recovery_code`), uses the code up and mails the account's owner. A wrong or used code is 422 `mfa_verification_failed`; guesses count against the account's 10 an hour (429).",
    success: { data: StepUpSchema },
    errors: ['mfa_verification_failed', 'rate_limited', ...WRITES],
    example: { code: 'k3m9-x2ab-7hqp-40vd' },
  },
  'gotrue-factors-enrol': {
    tag: 'Supabase-compatible',
    summary: 'Enrol a factor (GoTrue)',
    description:
      "auth-js's `mfa.enroll({ factorType: 'totp' })`: as `POST /api/auth/factors`, bare (`totp.qr_code` is the SVG, which auth-js makes a data URL).",
    success: { bare: TotpEnrolmentSchema },
    errors: ['mfa_required', 'too_many_factors', 'conflict'],
    example: { factor_type: 'totp', friendly_name: 'Phone' },
  },
  'gotrue-factors-challenge': {
    tag: 'Supabase-compatible',
    summary: 'Challenge a factor (GoTrue)',
    description: "auth-js's `mfa.challenge`: as `POST /api/auth/factors/{factorId}/challenge`, bare.",
    success: { bare: ChallengeSchema },
    errors: [],
  },
  'gotrue-factors-verify': {
    tag: 'Supabase-compatible',
    summary: 'Verify a factor (GoTrue)',
    description:
      "auth-js's `mfa.verify` and `mfa.challengeAndVerify`: as `POST /api/auth/factors/{factorId}/verify`; answers the aal2 session, bare.",
    success: { bare: GoTrueStepUpSchema },
    errors: ['mfa_required', 'mfa_challenge_expired', 'mfa_verification_failed', 'rate_limited', 'conflict'],
    example: CODE,
  },
  'gotrue-factors-delete': {
    tag: 'Supabase-compatible',
    summary: 'Unenrol a factor (GoTrue)',
    description:
      "auth-js's `mfa.unenroll`: as `DELETE /api/auth/factors/{factorId}` (a verified factor needs aal2: GoTrue's `insufficient_aal`).",
    success: { bare: FactorRemovedSchema },
    errors: ['mfa_required', 'conflict'],
  },
} as const satisfies Partial<Record<RouteName, Operation>>;
