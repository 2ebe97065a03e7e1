import * as z from 'zod/mini';
import { config } from '#lib/core/config.ts';
import { DEFAULT_LIMIT, MAX_LIMIT } from '#lib/core/pagination.ts';
import { hasHidden } from '#lib/core/text.ts';
import { AUDIT_ACTIONS } from '#lib/db/entities/audit-actions.ts';
import { ROLES } from '#lib/db/entities/roles.ts';

/**
 * Request shapes, normalised once: e-mails trimmed and lowercased, names trimmed. Slugs and roles
 * are taken exactly as sent: CONTRACT.md refuses uppercase rather than rewriting it.
 */
/**
 * Control characters (NUL included), unpaired UTF-16 surrogates and line or paragraph separators,
 * which no name needs.
 */
const UNPRINTABLE = /[\p{Cc}\p{Cs}\p{Zl}\p{Zp}]/u;

/**
 * A name: shown in member lists, invitation pages and e-mail subjects, so it must read as what it
 * is. Hidden characters (lib/core/text.ts: bidirectional controls, zero-width and other invisible ones)
 * are refused rather than removed, so a name made only of them is refused too.
 */
export const text = (max: number) =>
  z.string({ error: 'must be a string' }).check(
    z.trim(),
    z.minLength(1, { error: 'must not be empty' }),
    z.maxLength(max, { error: `must be at most ${max} characters` }),
    z.refine((value) => !UNPRINTABLE.test(value), { error: 'must not contain control characters' }),
    z.refine((value) => !hasHidden(value), { error: 'must not contain invisible or bidirectional control characters' }),
  );

const EMAIL_ERROR = 'must be an e-mail address';

/**
 * ASCII is checked before lowercasing: Unicode case mapping turns some non-ASCII letters into
 * ASCII ones (U+212A KELVIN SIGN becomes `k`), which would let a look-alike address through.
 */
export const Email = z.pipe(
  z.string({ error: 'must be a string' }).check(z.trim(), z.regex(/^[\x20-\x7e]*$/, { error: EMAIL_ERROR, abort: true }), z.toLowerCase()),
  z.email({ error: EMAIL_ERROR }).check(z.maxLength(254, { error: 'must be at most 254 characters' })),
);

export const SLUG_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,46}[a-z0-9])$/;
export const Slug = z.string({ error: 'must be a string' }).check(
  z.regex(SLUG_PATTERN, {
    error: 'must be 2 to 48 characters of a-z, 0-9 and -, starting and ending with a letter or digit',
  }),
);

export const Role = z.enum(ROLES, { error: 'must be one of OWNER, ADMIN, MEMBER' });

/** New passwords: the configured minimum up to 256 characters. */
export const NewPassword = z
  .string({ error: 'must be a string' })
  .check(
    z.minLength(config.passwordMinLength, { error: `must be at least ${config.passwordMinLength} characters` }),
    z.maxLength(256, { error: 'must be at most 256 characters' }),
  );

/** A token from a mailed link: 43 base64url characters as issued; anything else simply will not match (410). */
const MailedToken = z
  .string({ error: 'must be a string' })
  .check(z.minLength(1, { error: 'must not be empty' }), z.maxLength(512, { error: 'must be at most 512 characters' }));

export const SignUpBody = z.object({
  email: Email,
  password: NewPassword,
  firstName: text(100),
  lastName: text(100),
  /** The token of an invitation e-mail's link: signing up with it confirms the address it was sent to. */
  inviteToken: z.optional(MailedToken),
});

export const VerifyBody = z.object({ token: MailedToken });

export const RecoverBody = z.object({ email: Email });

export const ResetBody = z.object({ token: MailedToken, password: NewPassword });

export const UserDeleteBody = z.object({
  currentPassword: z
    .string({ error: 'must be a string' })
    .check(z.minLength(1, { error: 'must not be empty' }), z.maxLength(256, { error: 'must be at most 256 characters' })),
});

/** Sign-in takes any stored password's length; the cap refuses huge inputs before hashing. */
export const SignInBody = z.object({
  email: Email,
  password: z
    .string({ error: 'must be a string' })
    .check(z.minLength(1, { error: 'must not be empty' }), z.maxLength(256, { error: 'must be at most 256 characters' })),
});

/** A refresh token as issued: 43 base64url characters; anything else simply will not match. */
export const RefreshBody = z.object({
  refresh_token: z
    .string({ error: 'must be a string' })
    .check(z.minLength(1, { error: 'must not be empty' }), z.maxLength(512, { error: 'must be at most 512 characters' })),
});

/** Names, or a new password or e-mail address with the current password; at least one change. */
export const UserUpdateBody = z
  .object({
    firstName: z.optional(text(100)),
    lastName: z.optional(text(100)),
    email: z.optional(Email),
    password: z.optional(NewPassword),
    currentPassword: z.optional(
      z.string({ error: 'must be a string' }).check(z.maxLength(256, { error: 'must be at most 256 characters' })),
    ),
  })
  .check(
    z.refine((body) => body.password === undefined || body.currentPassword !== undefined, {
      error: 'is required to change the password',
      path: ['currentPassword'],
    }),
    z.refine((body) => body.email === undefined || body.currentPassword !== undefined, {
      error: 'is required to change the e-mail address',
      path: ['currentPassword'],
    }),
    z.refine(
      (body) => body.firstName !== undefined || body.lastName !== undefined || body.email !== undefined || body.password !== undefined,
      {
        error: 'send firstName, lastName, email or password',
        path: ['(body)'],
      },
    ),
  );

/** `?scope=global` ends every session of the user; the default ends the current one. */
export const SignOutQuery = z.object({
  scope: z.optional(z.enum(['local', 'global'], { error: 'must be local or global' })),
});

export const TeamBody = z.object({ name: text(100), slug: Slug });

/** An update also sets whether the team requires MFA (absent: unchanged). */
export const TeamUpdateBody = z.object({ name: text(100), slug: Slug, requireMfa: z.optional(z.boolean()) });

export const RoleBody = z.object({ role: Role });

export const InviteBody = z.object({ email: Email, role: Role });

/** Rows of one bulk invite: each is an invite of its own (a transaction, an e-mail), and 100 finish well within the function's time. */
export const MAX_BULK_INVITES = 100;
const ROWS_ERROR = `must hold 1 to ${MAX_BULK_INVITES} invites`;

/**
 * One row of a bulk invite, as the list's check sees it: anything. Each row is checked on its own as
 * an InviteBody (lib/teams/invites/bulk.ts), so that a bad row fails alone, in the answer; the
 * OpenAPI document describes the rows as InviteBody (lib/openapi/components.ts).
 */
export const BulkInviteRow = z.unknown();

/** Only the list is checked here (BulkInviteRow). */
export const BulkInviteBody = z.object({
  invites: z.array(BulkInviteRow).check(z.minLength(1, { error: ROWS_ERROR }), z.maxLength(MAX_BULK_INVITES, { error: ROWS_ERROR })),
});

/** The member to nominate as owner: the membership id, as `GET /api/teams/{slug}/members` lists it. */
export const TransferBody = z.object({
  memberId: z
    .number({ error: 'must be a number' })
    .check(z.refine((n) => Number.isSafeInteger(n) && n >= 1, { error: 'must be a member id: a whole number from 1' })),
});

/**
 * A webhook endpoint to register: its URL (lib/events/webhooks/addresses.ts checks its scheme, host and
 * addresses, which need the network) and the audit actions it subscribes to, each once.
 */
export const WebhookBody = z.object({
  url: z
    .string({ error: 'must be a string' })
    .check(z.minLength(1, { error: 'must not be empty' }), z.maxLength(2048, { error: 'must be at most 2048 characters' })),
  events: z.array(z.enum(AUDIT_ACTIONS, { error: `must each be one of ${AUDIT_ACTIONS.join(', ')}` })).check(
    z.minLength(1, { error: 'must name at least one event' }),
    z.refine((events) => new Set(events).size === events.length, { error: 'must not name an event twice' }),
  ),
});

/** `limit` and `cursor` of every list (query strings arrive as text). */
export const PageQuery = z.object({
  limit: z.optional(
    z
      .pipe(z.string().check(z.regex(/^[0-9]{1,4}$/, { error: `must be a whole number from 1 to ${MAX_LIMIT}` })), z.transform(Number))
      .check(z.refine((n) => n >= 1 && n <= MAX_LIMIT, { error: `must be a whole number from 1 to ${MAX_LIMIT}` })),
  ),
  cursor: z.optional(z.string().check(z.regex(/^[A-Za-z0-9_-]{1,2048}$/, { error: 'is not a cursor this list issued' }))),
});

/** A page of the audit log, optionally of one action. */
export const AuditQuery = z.object({
  ...PageQuery.shape,
  action: z.optional(z.enum(AUDIT_ACTIONS, { error: `must be one of ${AUDIT_ACTIONS.join(', ')}` })),
});

export const pageRequest = (query: z.infer<typeof PageQuery>) => ({
  limit: query.limit ?? DEFAULT_LIMIT,
  cursor: query.cursor,
});

export type RefreshInput = z.infer<typeof RefreshBody>;
export type UserUpdateInput = z.infer<typeof UserUpdateBody>;
export type SignUpInput = z.infer<typeof SignUpBody>;
export type VerifyInput = z.infer<typeof VerifyBody>;
export type RecoverInput = z.infer<typeof RecoverBody>;
export type ResetInput = z.infer<typeof ResetBody>;
export type UserDeleteInput = z.infer<typeof UserDeleteBody>;
export type SignInInput = z.infer<typeof SignInBody>;
// Second factors (docs/mfa.md), in GoTrue's names on both APIs.

/**
 * POST /api/auth/factors (and GoTrue's /factors): a factor to set up, a TOTP app or a passkey.
 * `issuer` (TOTP only) names the account in the app (default: this deployment's host).
 */
export const EnrolBody = z.object({
  factor_type: z.enum(['totp', 'webauthn'], { error: 'must be totp or webauthn' }),
  friendly_name: z.optional(text(100)),
  issuer: z.optional(text(100)),
});

export const RenameFactorBody = z.object({ friendly_name: text(100) });

/** Binary WebAuthn fields travel as base64url; a credential id is at most 1,023 bytes (1,364 characters). */
const base64url = (max: number) =>
  z
    .string()
    .check(
      z.maxLength(max, { error: `must be base64url of at most ${max} characters` }),
      z.regex(/^[\w-]*$/u, { error: 'must be base64url' }),
    );

/**
 * What a browser's navigator.credentials answers, as PublicKeyCredential.toJSON() (and auth-js)
 * write it. The library checks the rest; these bounds keep a hostile one small.
 */
const CredentialBase = {
  id: base64url(1364),
  rawId: base64url(1364),
  type: z.literal('public-key', { error: 'must be public-key' }),
  authenticatorAttachment: z.optional(z.enum(['platform', 'cross-platform'])),
  clientExtensionResults: z.optional(z.record(z.string(), z.unknown())),
};

export const RegistrationAnswer = z.object({
  ...CredentialBase,
  response: z.object({
    clientDataJSON: base64url(4096),
    attestationObject: base64url(16_384),
    transports: z.optional(z.array(z.string().check(z.maxLength(32))).check(z.maxLength(8))),
  }),
});

export const AssertionAnswer = z.object({
  ...CredentialBase,
  response: z.object({
    clientDataJSON: base64url(4096),
    authenticatorData: base64url(4096),
    signature: base64url(1024),
    userHandle: z.optional(z.nullable(base64url(128))),
  }),
});

/**
 * GoTrue's relying party fields, which auth-js sends from the page's location. Roster's own are
 * deploy options: when sent, they must be those (a page elsewhere cannot use this deployment's passkeys).
 */
const RelyingParty = {
  rpId: z.optional(z.string().check(z.maxLength(253))),
  rpOrigins: z.optional(z.array(z.string().check(z.maxLength(2048))).check(z.maxLength(10))),
};

/** POST …/factors/{id}/challenge: nothing for a TOTP factor; auth-js names the relying party for a passkey. */
export const ChallengeBody = z.object({ webauthn: z.optional(z.object(RelyingParty)) });

/**
 * A code from a TOTP factor (six digits), or a passkey's answer (`create` registers the factor,
 * `request` proves it), for the challenge made for it in this session.
 */
/** A TOTP code as an authenticator app shows it. */
export const TotpCode = z.string().check(z.regex(/^\d{6}$/u, { error: 'must be the six digits the app shows' }));

export const VerifyFactorBody = z.object({
  challenge_id: z.uuid({ error: 'must be the id of a challenge' }),
  code: z.optional(TotpCode),
  webauthn: z.optional(
    z.discriminatedUnion('type', [
      z.object({ ...RelyingParty, type: z.literal('create'), credential_response: RegistrationAnswer }),
      z.object({ ...RelyingParty, type: z.literal('request'), credential_response: AssertionAnswer }),
    ]),
  ),
});

/** POST /api/auth/passkeys/sign-in: a passkey's answer to a sign-in challenge, with no session yet. */
export const PasskeySignInBody = z.object({
  challenge_id: z.uuid({ error: 'must be the id of a challenge' }),
  webauthn: z.object({ ...RelyingParty, type: z.literal('request', { error: 'must be request' }), credential_response: AssertionAnswer }),
});

/** One of the account's recovery codes, as shown (dashes, spaces and case do not matter). */
export const RecoveryCodeBody = z.object({ code: z.string().check(z.maxLength(64)) });

export type TeamInput = z.infer<typeof TeamBody>;
export type EnrolInput = z.infer<typeof EnrolBody>;
export type VerifyFactorInput = z.infer<typeof VerifyFactorBody>;
export type ChallengeInput = z.infer<typeof ChallengeBody>;
export type PasskeySignInInput = z.infer<typeof PasskeySignInBody>;
export type RegistrationAnswerInput = z.infer<typeof RegistrationAnswer>;
export type AssertionAnswerInput = z.infer<typeof AssertionAnswer>;
export type TeamUpdateInput = z.infer<typeof TeamUpdateBody>;
export type RoleInput = z.infer<typeof RoleBody>;
export type InviteInput = z.infer<typeof InviteBody>;
export type TransferInput = z.infer<typeof TransferBody>;
export type WebhookInput = z.infer<typeof WebhookBody>;
