import * as z from 'zod/mini';
import { MAX_METADATA_BYTES, MAX_METADATA_KEYS, withinMetadataBounds } from '#lib/core/user-metadata.ts';
import { ChallengeBody, Email, NewPassword, text } from './schemas.ts';
import { IdentitySchema, UserSchema } from './responses.ts';

/**
 * GoTrue's request and answer shapes for the Supabase-compatible API (/auth/v1, docs/supabase.md),
 * as @supabase/auth-js sends and reads them. Unknown members (auth-js's `gotrue_meta_security`,
 * `code_challenge`) are ignored; the values Roster keeps go through its own rules (Email, text).
 */

/** A current password: any length a stored one may have, capped before hashing. */
const Password = z.string({ error: 'must be a string' }).check(z.maxLength(256, { error: 'must be at most 256 characters' }));

/** `data`: the names and the user_metadata (lib/core/user-metadata.ts bounds it). */
export const UserData = z.record(z.string(), z.unknown()).check(
  z.refine(withinMetadataBounds, { error: `must have at most ${MAX_METADATA_KEYS} keys and ${MAX_METADATA_BYTES} bytes of JSON` }),
  z.refine((data) => data.firstName === undefined || text(100).safeParse(data.firstName).success, {
    error: 'firstName must be a name of 1 to 100 characters',
  }),
  z.refine((data) => data.lastName === undefined || text(100).safeParse(data.lastName).success, {
    error: 'lastName must be a name of 1 to 100 characters',
  }),
);

export const GoTrueSignUpBody = z.object({ email: Email, password: NewPassword, data: z.optional(UserData) });

export const GoTrueTokenQuery = z.object({
  grant_type: z.enum(['password', 'refresh_token', 'pkce'], { error: 'must be password, refresh_token or pkce' }),
});
/** Either grant's members; the use case checks those of the grant asked for. */
export const GoTrueTokenBody = z.object({
  email: z.optional(z.unknown()),
  password: z.optional(z.unknown()),
  refresh_token: z.optional(z.unknown()),
  auth_code: z.optional(z.unknown()),
  code_verifier: z.optional(z.unknown()),
});

export const GoTrueUserUpdateBody = z.object({
  email: z.optional(Email),
  password: z.optional(NewPassword),
  data: z.optional(UserData),
  current_password: z.optional(Password),
  phone: z.optional(z.never({ error: 'phone numbers are not supported' })),
  nonce: z.optional(z.never({ error: 'reauthentication nonces are not supported: send current_password' })),
});

export const GoTrueLogoutQuery = z.object({
  scope: z.optional(z.enum(['global', 'local', 'others'], { error: 'must be global, local or others' })),
});

export const GoTrueRecoverBody = z.object({ email: Email });

export const GoTrueVerifyBody = z.object({
  type: z.enum(['signup', 'email', 'email_change', 'recovery', 'invite', 'magiclink'], { error: 'must be a GoTrue verification type' }),
  token_hash: z.optional(z.string({ error: 'must be a string' }).check(z.maxLength(512, { error: 'must be at most 512 characters' }))),
  token: z.optional(z.string({ error: 'must be a string' })),
  email: z.optional(z.string({ error: 'must be a string' })),
});

export const GoTrueResendBody = z.object({
  type: z.enum(['signup', 'email_change', 'sms', 'phone_change'], { error: 'must be signup, email_change, sms or phone_change' }),
  email: z.optional(Email),
  phone: z.optional(z.never({ error: 'phone numbers are not supported' })),
});

/**
 * auth-js's `mfa.challenge` sends its parameters as the body: the factor (also in the path), for a
 * passkey the relying party (ChallengeBody) and, for phone factors, a channel. TOTP challenges need
 * none of them; phone factors are not offered.
 */
export const GoTrueChallengeBody = z.object({
  ...ChallengeBody.def.shape,
  factorId: z.optional(z.string()),
  channel: z.optional(z.never({ error: 'phone factors are not supported' })),
});

// Answers, for the OpenAPI document (lib/openapi/) and the tests' check of every answer.

/** The user as GoTrue answers it: the API's user, without the members that have no value yet (auth-js's types have them optional). */
export const GoTrueUserSchema = z.strictObject({
  ...UserSchema.def.shape,
  email_confirmed_at: z.optional(z.string()),
  confirmed_at: z.optional(z.string()),
  last_sign_in_at: z.optional(z.string()),
  /** Always, as GoTrue: auth-js's getUserIdentities reads them (the password's is `email`). */
  identities: z.array(IdentitySchema),
});

export const GoTrueSessionSchema = z.strictObject({
  access_token: z.string(),
  token_type: z.literal('bearer'),
  expires_in: z.int().check(z.positive()),
  expires_at: z.int().check(z.positive()),
  refresh_token: z.string(),
  user: GoTrueUserSchema,
});

/** Sign-up's answer: the session, or with CONCEAL_ACCOUNTS the user alone (GoTrue's answer when confirmations come first). */
/** A verified factor's answer: the aal2 session, and the recovery codes when this verify made them (docs/mfa.md). */
export const GoTrueStepUpSchema = z.strictObject({ ...GoTrueSessionSchema.def.shape, recovery_codes: z.optional(z.array(z.string())) });

export const GoTrueSignUpAnswerSchema = z.union([GoTrueSessionSchema, GoTrueUserSchema]);

export const GoTrueSettingsSchema = z.strictObject({
  external: z.record(z.string(), z.boolean()),
  disable_signup: z.boolean(),
  mailer_autoconfirm: z.boolean(),
  phone_autoconfirm: z.boolean(),
  sms_provider: z.string(),
  saml_enabled: z.boolean(),
});

export const GoTrueErrorSchema = z.strictObject({
  code: z.string(),
  error_code: z.string(),
  msg: z.string(),
  weak_password: z.optional(z.strictObject({ reasons: z.array(z.enum(['length', 'pwned'])) })),
});

export type GoTrueUser = z.infer<typeof GoTrueUserSchema>;
export type GoTrueSession = z.infer<typeof GoTrueSessionSchema>;
export type GoTrueStepUp = z.infer<typeof GoTrueStepUpSchema>;
export type GoTrueSettings = z.infer<typeof GoTrueSettingsSchema>;
export type GoTrueSignUpInput = z.infer<typeof GoTrueSignUpBody>;
export type GoTrueTokenInput = z.infer<typeof GoTrueTokenBody>;
export type GoTrueGrant = z.infer<typeof GoTrueTokenQuery>['grant_type'];
export type GoTrueUserUpdateInput = z.infer<typeof GoTrueUserUpdateBody>;
export type GoTrueVerifyInput = z.infer<typeof GoTrueVerifyBody>;
export type GoTrueResendInput = z.infer<typeof GoTrueResendBody>;
