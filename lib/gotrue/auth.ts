import type { Claims, ClientInfo } from '#lib/auth/session-items.ts';
import { AppError } from '#lib/core/errors.ts';
import type { Db } from '#lib/db/service.ts';
import { validate } from '#lib/http/validation.ts';
import { getCurrentUser, signOut, updateUser } from '#lib/identity/account.ts';
import { signInWithConfirmation, signInWithRecovery } from '#lib/identity/link-sign-in.ts';
import { recover, resendConfirmation } from '#lib/identity/recovery.ts';
import { refresh } from '#lib/identity/refresh.ts';
import { exchangeCode } from '#lib/identity/oauth/exchange.ts';
import { signIn, signUp } from '#lib/identity/users.ts';
import { ProviderTokenBody } from '#lib/wire/oauth.ts';
import type {
  GoTrueGrant,
  GoTrueResendInput,
  GoTrueSession,
  GoTrueSignUpInput,
  GoTrueStepUp,
  GoTrueTokenInput,
  GoTrueUser,
  GoTrueUserUpdateInput,
  GoTrueVerifyInput,
} from '#lib/wire/gotrue.ts';
import type { StepUp } from '#lib/wire/responses.ts';
import { RefreshBody, SignInBody, text } from '#lib/wire/schemas.ts';
import { gotrueSession, gotrueUser } from './views.ts';

/**
 * GoTrue's auth endpoints over Roster's own use cases (docs/supabase.md): what differs is the
 * wire (bare bodies, snake_case, `data` for user metadata, grants by query), never a rule.
 */

/** A password or address change needs no current password from a session opened at most this long ago (a sign-in, a reset link). */
export const RECENT_SIGN_IN_MS = 15 * 60_000;

/** A name `data` carries, as Roster keeps names (UserData checked it already: trimmed, bounded). */
const nameOf = (value: unknown): string | undefined => (value === undefined ? undefined : text(100).parse(value));

/** `data` split into the names Roster keeps as such and the rest (user_metadata). */
const namesAnd = (data: Record<string, unknown> | undefined) => {
  const { firstName, lastName, ...metadata } = data ?? {};
  return { firstName: nameOf(firstName), lastName: nameOf(lastName), metadata };
};

/**
 * POST /auth/v1/signup: sign-up as POST /api/auth/signup, names from `data` (none: empty, as
 * GoTrue keeps no names), the rest of `data` as the user's metadata. Answers the session: Roster
 * signs a new account in at once, its address unconfirmed until the mailed link is used.
 */
export const gotrueSignUp = async (
  db: Db,
  input: GoTrueSignUpInput,
  client: ClientInfo,
  now: Date,
): Promise<GoTrueSession | GoTrueUser> => {
  const { firstName, lastName, metadata } = namesAnd(input.data);
  const answer = await signUp(
    db,
    { email: input.email, password: input.password, firstName: firstName ?? '', lastName: lastName ?? '', metadata },
    client,
    now,
  );
  // Concealing accounts: GoTrue's answer when confirmations come first, the user alone.
  return answer.session === null ? gotrueUser(answer.user) : gotrueSession(answer);
};

/** The grant's own body, checked by its own rules, and its session. */
const grantSession = (db: Db, grant: GoTrueGrant, input: GoTrueTokenInput, client: ClientInfo, now: Date) => {
  switch (grant) {
    case 'password':
      return signIn(db, validate(SignInBody, { email: input.email, password: input.password }), client, now);
    case 'refresh_token':
      return refresh(db, validate(RefreshBody, { refresh_token: input.refresh_token }), now);
    case 'pkce':
      // auth-js's exchangeCodeForSession after a provider sign-in (docs/sso.md).
      return exchangeCode(db, validate(ProviderTokenBody, { code: input.auth_code, codeVerifier: input.code_verifier }), client, now);
  }
};

/** POST /auth/v1/token?grant_type=password|refresh_token|pkce: sign-in, refresh, or a provider sign-in's code traded. */
export const gotrueToken = async (
  db: Db,
  grant: GoTrueGrant,
  input: GoTrueTokenInput,
  client: ClientInfo,
  now: Date,
): Promise<GoTrueSession> => gotrueSession(await grantSession(db, grant, input, client, now));

export const gotrueGetUser = async (db: Db, claims: Claims): Promise<GoTrueUser> => gotrueUser(await getCurrentUser(db, claims));

/**
 * PUT /auth/v1/user: names and metadata from `data`, a new password or address (with
 * `current_password`, or from a session opened within RECENT_SIGN_IN_MS, as after a reset link).
 */
export const gotrueUpdateUser = async (
  db: Db,
  claims: Claims,
  input: GoTrueUserUpdateInput,
  client: ClientInfo,
  now: Date,
): Promise<GoTrueUser> => {
  const { firstName, lastName, metadata } = namesAnd(input.data);
  const changes = {
    ...(firstName !== undefined ? { firstName } : {}),
    ...(lastName !== undefined ? { lastName } : {}),
    ...(Object.keys(metadata).length > 0 ? { metadata } : {}),
    ...(input.email !== undefined ? { email: input.email } : {}),
    ...(input.password !== undefined ? { password: input.password } : {}),
    ...(input.current_password !== undefined ? { currentPassword: input.current_password } : {}),
  };
  if (Object.keys(changes).length === 0) throw new AppError('validation_failed', 'Send email, password or data.');
  return gotrueUser(await updateUser(db, claims, changes, client, now, { recentSignInMs: RECENT_SIGN_IN_MS }));
};

export const gotrueLogout = (db: Db, claims: Claims, scope: 'global' | 'local' | 'others' = 'global') => signOut(db, claims, scope);

export const gotrueRecover = (db: Db, email: string, client: ClientInfo, now: Date) => recover(db, { email }, client, now);

/**
 * POST /auth/v1/verify with `token_hash`: a confirmation link (signup, email, email_change) or a
 * reset link (recovery) used, and its holder signed in. Roster mails links, not six-digit codes,
 * and its invitations are answered signed in: those types are refused.
 */
export const gotrueVerify = async (db: Db, input: GoTrueVerifyInput, client: ClientInfo, now: Date): Promise<GoTrueSession> => {
  if (input.token_hash === undefined)
    throw new AppError('validation_failed', undefined, { fields: { token_hash: 'is required: Roster mails links, not codes' } });
  switch (input.type) {
    case 'signup':
    case 'email':
    case 'email_change':
      return gotrueSession(await signInWithConfirmation(db, input.token_hash, client, now));
    case 'recovery':
      return gotrueSession(await signInWithRecovery(db, input.token_hash, client, now));
    default:
      throw new AppError('validation_failed', undefined, { fields: { type: `${input.type} links are not sent by Roster` } });
  }
};

/** POST /auth/v1/resend: a new confirmation link by address (signup); nothing else is sent that way. */
export const gotrueResend = async (db: Db, input: GoTrueResendInput, client: ClientInfo, now: Date) => {
  if (input.type !== 'signup' || input.email === undefined)
    throw new AppError('validation_failed', undefined, { fields: { type: 'only signup confirmations are resent by address, with email' } });
  return resendConfirmation(db, input.email, client, now);
};

/** A verified factor's answer as GoTrue's: the session, bare (auth-js saves it), with the recovery codes when there are new ones. */
export const gotrueStepUp = ({ session, recovery_codes }: StepUp): GoTrueStepUp => ({
  ...gotrueSession({ session }),
  ...(recovery_codes ? { recovery_codes } : {}),
});
