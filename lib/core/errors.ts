/** Every error the API can answer with, and its HTTP status: CONTRACT.md "Status codes". */
export const STATUS = {
  invalid_json: 400,
  invalid_body: 400,
  unauthorized: 401,
  invalid_credentials: 401,
  forbidden: 403,
  email_not_verified: 403,
  invite_email_mismatch: 403,
  mfa_required: 403,
  not_found: 404,
  method_not_allowed: 405,
  slug_taken: 409,
  email_taken: 409,
  already_member: 409,
  last_owner: 409,
  sole_owner: 409,
  invite_not_pending: 409,
  conflict: 409,
  domain_taken: 409,
  identity_already_exists: 409,
  idempotency_in_progress: 409,
  transfer_stale: 409,
  invite_expired: 410,
  token_expired: 410,
  mfa_challenge_expired: 410,
  body_too_large: 413,
  unsupported_media_type: 415,
  validation_failed: 422,
  domain_not_verified: 422,
  idempotency_key_reused: 422,
  mfa_verification_failed: 422,
  too_many_factors: 422,
  rate_limited: 429,
  internal: 500,
  unavailable: 503,
} as const;

export type ErrorCode = keyof typeof STATUS;

/** What each code says unless the thrower says more. */
export const MESSAGES: Record<ErrorCode, string> = {
  invalid_json: 'The request body is not valid JSON.',
  invalid_body: 'The request body has a field of the wrong type.',
  unauthorized: 'Sign in first: the access token is missing, malformed, expired or revoked.',
  invalid_credentials: 'The e-mail address or the password is wrong.',
  forbidden: 'Your role in this team does not allow that.',
  email_not_verified: 'Confirm your e-mail address first: follow the link in the e-mail Roster sent you.',
  invite_email_mismatch: 'This invitation is addressed to another e-mail address.',
  mfa_required:
    'This needs a second factor: set one up (POST /api/auth/factors) if you have none, then verify a code from it in this session (POST /api/auth/factors/{factorId}/challenge and /verify).',
  not_found: 'Nothing was found here.',
  method_not_allowed: 'This path does not answer that method.',
  slug_taken: 'Another team already uses that slug.',
  email_taken: 'An account with that e-mail address already exists.',
  already_member: 'That user is already a member of the team.',
  last_owner: 'A team must keep at least one owner.',
  sole_owner: 'You are the only owner of some teams: make someone else an owner, or delete those teams, first.',
  invite_not_pending: 'This invitation is no longer pending.',
  conflict: 'Another request changed the same data at the same time; try again.',
  domain_taken: 'Another team has verified this domain: one domain belongs to one team.',
  identity_already_exists: 'This identity is linked to another account: unlink it there first.',
  idempotency_in_progress: 'A request with this Idempotency-Key is still running; try again shortly.',
  transfer_stale: 'The nominee or the nominating owner no longer has the role they had when the transfer was proposed: nominate again.',
  invite_expired: 'This invitation has expired.',
  token_expired: 'This link is invalid or has expired, or it was used already. Ask for a new one.',
  mfa_challenge_expired: 'This challenge has expired or was used already: ask for a new one.',
  body_too_large: 'The request body is larger than 64 KiB.',
  unsupported_media_type: 'Send the request body as application/json.',
  validation_failed: 'Some fields are missing or invalid.',
  domain_not_verified: 'The DNS record that proves this domain was not found: publish the TXT record the domain names, then verify again.',
  idempotency_key_reused: 'This Idempotency-Key was used with another request: use a new key for a new request.',
  mfa_verification_failed: 'The code is wrong, or was used already.',
  too_many_factors: 'This account has as many second factors as it may: remove one first.',
  rate_limited: 'Too many requests; wait and try again.',
  internal: 'Something went wrong on our side.',
  unavailable: 'The service is briefly unavailable; try again shortly.',
};

/** An error meant for the caller: its code picks the status, its message is safe to show. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly fields: Record<string, string> | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(
    code: ErrorCode,
    message: string = MESSAGES[code],
    extra: { fields?: Record<string, string>; headers?: Record<string, string> } = {},
  ) {
    super(message);
    this.name = 'AppError';
    this.code = code;
    this.fields = extra.fields;
    this.headers = extra.headers;
  }

  get status(): number {
    return STATUS[this.code];
  }
}

export const notFound = (message?: string): AppError => new AppError('not_found', message);

/** 429 `rate_limited`: `Retry-After` is the wait in whole seconds, rounded up, at least 1. */
export const rateLimited = (waitMs: number, message?: string): AppError =>
  new AppError('rate_limited', message, { headers: { 'Retry-After': String(Math.max(1, Math.ceil(waitMs / 1000))) } });

/** 503 `unavailable` with `Retry-After`: a dependency (DynamoDB, the key store) or the time budget failed us. */
export const serviceUnavailable = (retryAfterSeconds = 1, message?: string): AppError =>
  new AppError('unavailable', message, { headers: { 'Retry-After': String(retryAfterSeconds) } });
