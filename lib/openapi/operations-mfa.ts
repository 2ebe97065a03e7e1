import type { RouteName } from '#lib/http/routes.ts';
import { GoTrueStepUpSchema } from '#lib/wire/gotrue.ts';
import {
  ChallengeSchema,
  FactorListSchema,
  FactorRemovedSchema,
  FactorSchema,
  EnrolmentSchema,
  RecoveryCodesSchema,
  WebauthnChallengeSchema,
} from '#lib/wire/mfa.ts';
import { AuthSessionSchema, StepUpSchema } from '#lib/wire/responses.ts';
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
    summary: 'Set up a factor (TOTP or passkey)',
    description:
      '`factor_type: "totp"` answers the new factor\'s key once: `totp.secret` (base32), `totp.uri` (`otpauth://`) and `totp.qr_code` (an SVG document) for an authenticator app. `factor_type: "webauthn"` sets up a passkey: its first challenge answers the options for `navigator.credentials.create`, and verifying the browser\'s answer registers it. The factor is `unverified` until it is proven once (challenge, then verify), which also answers the recovery codes when it is the first. With a verified factor already, only an aal2 session may add another (403 `mfa_required`); at most 10 factors (422 `too_many_factors`). `Idempotency-Key` is not honoured: the answer holds a secret, so it is never stored.',
    success: { data: EnrolmentSchema },
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
    description:
      'A challenge for this session, which `verify` must name within 5 minutes (`expires_at`, in seconds since the epoch). A passkey\'s carries `webauthn.credential_options.publicKey`, the options for `navigator.credentials.create` (`type: "create"`, an unverified passkey) or `.get` (`type: "request"`), binary fields as base64url (`PublicKeyCredential.parseCreationOptionsFromJSON` reads them). The body is optional: auth-js sends `webauthn.rpId` and `rpOrigins`, which must be this deployment\'s (422 otherwise).',
    success: { data: ChallengeSchema },
    errors: [],
  },
  'auth-factors-verify': {
    tag: 'Second factors',
    summary: 'Verify a code or a passkey (step up to aal2)',
    description:
      "Checks a code from a TOTP factor (`code`), or a passkey's answer (`webauthn: { type, credential_response }`, the browser's credential as `toJSON()` writes it), for its challenge, and raises this session to aal2: the answer is a new `data.session` (`aal: \"aal2\"` in the access token, `amr` listing `totp` or `mfa/webauthn`, and the sign-in). A passkey's signature counter must go up (a cloned or replayed answer is 422 `mfa_verification_failed`). A code works once, and no older one after it (422 `mfa_verification_failed`); a used or expired challenge is 410 `mfa_challenge_expired`. Guesses: 5 then 1 a minute per factor, 10 an hour per account (429 with `Retry-After`); a right code does not count. A factor's first code verifies it (once the account has a verified factor, only from an aal2 session: 403 `mfa_required`), ends the account's other sessions and retires this session's older refresh tokens; the account's first factor answers ten `recovery_codes`, shown only this once, and takes the account's other unverified factors away. `Idempotency-Key` is not honoured.",
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
  'auth-passkeys-challenge': {
    tag: 'Auth',
    summary: 'Passkey sign-in: challenge',
    description:
      "The first step of signing in with a passkey alone: `webauthn.credential_options.publicKey` are the options for `navigator.credentials.get` (no credentials listed: the authenticator offers the passkeys it holds for this site; user verification required). `sign-in` must answer it within 5 minutes. Each challenge costs a token of the source address's sign-in allowance (429 with `Retry-After`).",
    success: { data: WebauthnChallengeSchema },
    errors: ['rate_limited'],
  },
  'auth-passkeys-sign-in': {
    tag: 'Auth',
    summary: 'Passkey sign-in',
    description:
      "Signs in with the passkey that answered the challenge (`webauthn.credential_response`: the browser's credential as `toJSON()` writes it). The authenticator must have verified its user (a PIN or biometric): a passkey is then two factors in one, so the session starts at aal2 (`amr`: `mfa/webauthn`, `passkey`). An unknown or removed passkey, a wrong signature, an unverified user or a counter that did not go up is 401 `invalid_credentials`; a used or expired challenge is 410 `mfa_challenge_expired`. `Idempotency-Key` is not honoured.",
    success: { data: AuthSessionSchema },
    errors: ['invalid_credentials', 'mfa_challenge_expired'],
  },
  'gotrue-factors-enrol': {
    tag: 'Supabase-compatible',
    summary: 'Enrol a factor (GoTrue)',
    description:
      "auth-js's `mfa.enroll({ factorType: 'totp' })` and `({ factorType: 'webauthn' })`: as `POST /api/auth/factors`, bare (`totp.qr_code` is the SVG, which auth-js makes a data URL).",
    success: { bare: EnrolmentSchema },
    errors: ['mfa_required', 'too_many_factors', 'conflict'],
    example: { factor_type: 'totp', friendly_name: 'Phone' },
  },
  'gotrue-factors-challenge': {
    tag: 'Supabase-compatible',
    summary: 'Challenge a factor (GoTrue)',
    description:
      "auth-js's `mfa.challenge` (and `mfa.webauthn.register` and `authenticate`, which call it): as `POST /api/auth/factors/{factorId}/challenge`, bare.",
    success: { bare: ChallengeSchema },
    errors: [],
  },
  'gotrue-factors-verify': {
    tag: 'Supabase-compatible',
    summary: 'Verify a factor (GoTrue)',
    description:
      "auth-js's `mfa.verify`, `mfa.challengeAndVerify` and `mfa.webauthn.*`: as `POST /api/auth/factors/{factorId}/verify`; answers the aal2 session, bare.",
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
