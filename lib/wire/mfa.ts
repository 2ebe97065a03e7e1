import * as z from 'zod/mini';
import { FACTOR_TYPES } from '#lib/db/entities/factors.ts';

/**
 * Second factors on the wire (docs/mfa.md), in GoTrue's names on both APIs, so that auth-js's
 * `mfa.*` methods read Roster's answers unchanged. The request bodies are in schemas.ts.
 */
const Timestamp = z.iso.datetime();
const Uuid = z.uuid();

/** A factor as the user's `factors` list shows it (GoTrue's Factor). */
export const FactorSchema = z.strictObject({
  id: Uuid,
  friendly_name: z.string(),
  factor_type: z.enum(FACTOR_TYPES),
  /** `unverified` until a first code from it is verified (it then counts as a factor). */
  status: z.enum(['unverified', 'verified']),
  created_at: Timestamp,
  updated_at: Timestamp,
});

/** What enrolment answers, once: the key (also as the `otpauth://` URI and its QR code, an SVG document). */
export const TotpEnrolmentSchema = z.strictObject({
  id: Uuid,
  type: z.literal('totp'),
  friendly_name: z.string(),
  totp: z.strictObject({ qr_code: z.string(), secret: z.string(), uri: z.string() }),
});

/** What enrolling a passkey answers: the factor, unverified until its challenge's `create` answer is verified. */
export const WebauthnEnrolmentSchema = z.strictObject({ id: Uuid, type: z.literal('webauthn'), friendly_name: z.string() });

export const EnrolmentSchema = z.union([TotpEnrolmentSchema, WebauthnEnrolmentSchema]);

/** Seconds since the epoch after which the challenge no longer takes an answer. */
const ExpiresAt = z.int();

/**
 * The options for navigator.credentials (`publicKey`, WebAuthn's PublicKeyCredentialCreationOptionsJSON
 * or PublicKeyCredentialRequestOptionsJSON: binary fields as base64url, as
 * PublicKeyCredential.parseCreationOptionsFromJSON and auth-js read them).
 */
const CredentialOptions = z.strictObject({ publicKey: z.record(z.string(), z.unknown()) });

export const WebauthnChallengeSchema = z.strictObject({
  id: Uuid,
  type: z.literal('webauthn'),
  expires_at: ExpiresAt,
  webauthn: z.strictObject({ type: z.enum(['create', 'request']), credential_options: CredentialOptions }),
});

export const ChallengeSchema = z.union([
  z.strictObject({ id: Uuid, type: z.literal('totp'), expires_at: ExpiresAt }),
  WebauthnChallengeSchema,
]);

export const FactorListSchema = z.array(FactorSchema);

export const FactorRemovedSchema = z.strictObject({ id: Uuid });

/** Ten one-time codes, shown once: when the first factor is verified, and when regenerated. */
export const RecoveryCodesSchema = z.strictObject({ recovery_codes: z.array(z.string()) });

export type Factor = z.infer<typeof FactorSchema>;
export type Enrolment = z.infer<typeof EnrolmentSchema>;
export type Challenge = z.infer<typeof ChallengeSchema>;
export type WebauthnChallenge = z.infer<typeof WebauthnChallengeSchema>;
