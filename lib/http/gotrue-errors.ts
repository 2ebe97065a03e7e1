import type { APIGatewayProxyStructuredResultV2 as Result } from 'aws-lambda';
import { COMMON_PASSWORD_MESSAGE } from '#lib/auth/common-passwords.ts';
import type { AppError, ErrorCode } from '#lib/core/errors.ts';
import { currentRequest } from '#lib/core/log.ts';
import { appErrorOf, jsonResponse } from './errors.ts';

/**
 * The Supabase-compatible routes (`/auth/v1/…`, docs/supabase.md) answer errors as GoTrue does:
 * `{ code, error_code, msg }` with GoTrue's codes, and the `X-Supabase-Api-Version` header with
 * which auth-js reads `code` (its lib/fetch.ts). The use cases are Roster's, so are the refusals:
 * only their wording changes here.
 */
export const GOTRUE_API_VERSION = '2024-01-01';

/** GoTrue's status and code for each of Roster's codes a Supabase-compatible route may answer. */
export const GOTRUE_CODES: Partial<Record<ErrorCode, readonly [number, string]>> = {
  invalid_json: [400, 'bad_json'],
  invalid_body: [400, 'validation_failed'],
  validation_failed: [400, 'validation_failed'],
  unsupported_media_type: [415, 'validation_failed'],
  body_too_large: [413, 'validation_failed'],
  invalid_credentials: [400, 'invalid_credentials'],
  email_taken: [422, 'email_exists'],
  unauthorized: [403, 'bad_jwt'],
  token_expired: [403, 'otp_expired'],
  rate_limited: [429, 'over_request_rate_limit'],
  email_not_verified: [403, 'email_not_confirmed'],
  forbidden: [403, 'not_admin'],
  not_found: [404, 'not_found'],
  mfa_required: [403, 'insufficient_aal'],
  mfa_verification_failed: [422, 'mfa_verification_failed'],
  mfa_challenge_expired: [422, 'mfa_challenge_expired'],
  too_many_factors: [422, 'too_many_enrolled_mfa_factors'],
  conflict: [409, 'conflict'],
  identity_already_exists: [422, 'identity_already_exists'],
  unavailable: [503, 'request_timeout'],
  internal: [500, 'unexpected_failure'],
};

/**
 * Where a route's own wording differs: sign-up's taken address is `user_already_exists`, a refused
 * refresh token is GoTrue's 400 `refresh_token_not_found` (auth-js then drops the session).
 */
const ROUTE_CODES: Readonly<Record<string, Partial<Record<ErrorCode, readonly [number, string, string]>>>> = {
  'gotrue-signup': { email_taken: [422, 'user_already_exists', 'User already registered'] },
  'gotrue-token': {
    unauthorized: [400, 'refresh_token_not_found', 'Invalid Refresh Token: Refresh Token Not Found'],
    invalid_credentials: [400, 'invalid_credentials', 'Invalid login credentials'],
  },
};

/** The GoTrue status and code Roster's `code` becomes on `route` (the OpenAPI document and the tests list them). */
export const gotrueCodeOf = (route: string, code: ErrorCode): readonly [number, string] => {
  const [status, gotrue] = ROUTE_CODES[route]?.[code] ?? GOTRUE_CODES[code] ?? [0, code];
  return [status, gotrue];
};

/** The routes that take a new password: only there is a refused password a weak one. */
const NEW_PASSWORD_ROUTES = new Set(['gotrue-signup', 'gotrue-user-update']);

/**
 * A refused new password: GoTrue's 422 `weak_password`, with why: too short, or among the common
 * ones. Any other problem with `password` (missing, not a string, too long) stays 400.
 */
const weakPassword = (error: AppError, route: string): { reasons: string[] } | undefined => {
  const problem = error.fields?.password;
  if (!NEW_PASSWORD_ROUTES.has(route) || error.code !== 'validation_failed' || problem === undefined) return undefined;
  if (problem === COMMON_PASSWORD_MESSAGE) return { reasons: ['pwned'] };
  return problem.startsWith('must be at least') ? { reasons: ['length'] } : undefined;
};

/** The GoTrue-shaped answer to `error` on Supabase-compatible route `route`. */
export const gotrueErrorResponse = (error: unknown, requestId: string, route: string): Result => {
  const appError = appErrorOf(error, requestId);
  const record = currentRequest();
  if (record) record.errorCode = appError.code;
  const weak = weakPassword(appError, route);
  const own = ROUTE_CODES[route]?.[appError.code];
  const [status, code] = weak ? [422, 'weak_password'] : (own ?? GOTRUE_CODES[appError.code] ?? [appError.status, appError.code]);
  const fields = appError.fields ? Object.entries(appError.fields).map(([field, problem]) => `${field} ${problem}`) : [];
  const msg = own?.[2] ?? (fields.length > 0 ? fields.join('; ') : appError.message);
  const headers = Object.fromEntries(Object.entries(appError.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
  return jsonResponse(status, { code, error_code: code, msg, ...(weak ? { weak_password: weak } : {}) }, requestId, {
    ...headers,
    'x-supabase-api-version': GOTRUE_API_VERSION,
  });
};
