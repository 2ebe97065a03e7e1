import {
  GoTrueChallengeBody,
  GoTrueLogoutQuery,
  GoTrueRecoverBody,
  GoTrueResendBody,
  GoTrueSignUpBody,
  GoTrueTokenBody,
  GoTrueTokenQuery,
  GoTrueUserUpdateBody,
  GoTrueVerifyBody,
} from '#lib/wire/gotrue.ts';
import { GoTrueAuthorizeQuery } from '#lib/wire/oauth.ts';
import { EnrolBody, VerifyFactorBody } from '#lib/wire/schemas.ts';
import type { Request } from './requests.ts';
import type { RouteName } from './routes.ts';

/**
 * What each Supabase-compatible route reads (requests.ts says why these maps exist). A map of its
 * own so that the seed's functions do not bundle GoTrue's schemas, nor the parts of zod only they use.
 */
export const GOTRUE_REQUESTS = {
  'gotrue-signup': { body: GoTrueSignUpBody },
  'gotrue-token': { body: GoTrueTokenBody, query: GoTrueTokenQuery },
  'gotrue-user-update': { body: GoTrueUserUpdateBody },
  'gotrue-logout': { query: GoTrueLogoutQuery },
  'gotrue-recover': { body: GoTrueRecoverBody },
  'gotrue-verify': { body: GoTrueVerifyBody },
  'gotrue-resend': { body: GoTrueResendBody },
  'gotrue-factors-enrol': { body: EnrolBody },
  'gotrue-factors-challenge': { body: GoTrueChallengeBody },
  'gotrue-factors-verify': { body: VerifyFactorBody },
  'gotrue-authorize': { query: GoTrueAuthorizeQuery },
  'gotrue-identities-authorize': { query: GoTrueAuthorizeQuery },
} as const satisfies Partial<Record<RouteName, Request>>;

export const gotrueRequestOf = (name: RouteName): Request => (GOTRUE_REQUESTS as Partial<Record<RouteName, Request>>)[name] ?? {};
