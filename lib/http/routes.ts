/**
 * THE route table: the single source for the CDK stack (one function and one API Gateway route
 * each), the local server and the tests. Pure data, so `cdk synth` loads no application code.
 * `name` is the handler's file in functions/; `actions` and `indexes` are the only DynamoDB
 * permissions its function gets.
 */
export type DynamoAction =
  'GetItem' | 'BatchGetItem' | 'Query' | 'PutItem' | 'UpdateItem' | 'DeleteItem' | 'ConditionCheckItem' | 'BatchWriteItem';

export interface Route {
  name: string;
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  /** Needs `Authorization: Token <access token>`; the session is checked on every request. */
  auth: boolean;
  /** Reads a JSON body (the others ignore any body). */
  body: boolean;
  /** Success status: 302 for the routes a browser is sent through (lib/http/redirect-endpoint.ts). */
  status: 200 | 201 | 302;
  actions: readonly DynamoAction[];
  /** Global secondary indexes the function queries. */
  indexes: readonly ('gsi1' | 'gsi2')[];
  /** Signs access tokens: only these functions (and `seals`) may read the private signing keys. */
  signs?: true;
  /**
   * Seals or opens second-factor secrets: reads the sealing keys, which ride in the signing keys'
   * secret (lib/auth/factor-seal.ts), so the same read as `signs`.
   */
  seals?: true;
  /**
   * Answers secrets (a TOTP key, tokens, recovery codes): never stored under an Idempotency-Key,
   * so the header is not honoured (docs/idempotency.md); a retry runs again.
   */
  secretAnswer?: true;
  /**
   * Concurrency reserved for (and capping) this function, password hashing being costly: only when
   * the deploy opts in (`cdk deploy -c reservedConcurrency=true`, infra/options.ts).
   */
  reservedConcurrency?: number;
  /** Files (paths in the project) shipped beside the bundle and read at run time (lib/core/shipped.ts). */
  files?: readonly string[];
  /**
   * Pages a list: reads the cursor key item (GetItem, in its actions) and may create it, a PutItem
   * on that item's partition only (lib/db/cursors.ts; infra/stack.ts).
   */
  pages?: true;
  /**
   * Needs the deployment's public URL (PUBLIC_URL: a TOTP key's issuer, the passkeys' relying
   * party and origins, PASSKEY_RP_ID and PASSKEY_ORIGINS when set; infra/stack.ts).
   */
  publicUrl?: true;
  /**
   * Takes part in a provider sign-in (docs/sso.md): gets OAUTH_PROVIDERS and OAUTH_REDIRECT_URLS;
   * `secret`: also reads the providers' client secrets (the callback, which trades their codes).
   */
  oauth?: 'public' | 'secret';
  /** Sends to the webhook queue (sqs:SendMessage on it, and its URL in WEBHOOK_QUEUE_URL; infra/stack.ts). */
  webhookQueue?: true;
  /**
   * Speaks GoTrue's dialect (the Supabase-compatible API at /auth/v1, docs/supabase.md): bare
   * bodies, GoTrue's error shape (lib/http/gotrue-errors.ts), no Idempotency-Key.
   */
  dialect?: 'gotrue';
}

const COMMON_PASSWORDS = ['lib/auth/common-passwords.json'] as const;
const SWAGGER_UI = ['node_modules/swagger-ui-dist/swagger-ui-bundle.js', 'node_modules/swagger-ui-dist/swagger-ui.css'] as const;

/**
 * Every authenticated function reads its caller's session (BatchGetItem, folded into its first
 * read) and the public signing keys (GetItem, cached). An authenticated POST also claims, settles
 * and frees `Idempotency-Key` records (PutItem, UpdateItem, DeleteItem: lib/http/idempotency-store.ts).
 */
const AUTH = ['GetItem', 'BatchGetItem'] as const;

export const ROUTES = [
  {
    name: 'auth-signup',
    method: 'POST',
    path: '/api/auth/signup',
    auth: false,
    body: true,
    status: 201,
    actions: ['GetItem', 'PutItem', 'UpdateItem', 'DeleteItem'],
    indexes: [],
    signs: true,
    reservedConcurrency: 10,
    files: COMMON_PASSWORDS,
  },
  {
    name: 'auth-signin',
    method: 'POST',
    path: '/api/auth/signin',
    auth: false,
    body: true,
    status: 200,
    actions: ['GetItem', 'UpdateItem', 'PutItem', 'Query', 'BatchWriteItem'],
    indexes: [],
    signs: true,
    reservedConcurrency: 20,
  },
  // Provider sign-in in the seed's style (docs/sso.md); the callback is GoTrue's path for both.
  {
    name: 'auth-oauth-authorize',
    method: 'GET',
    path: '/api/auth/oauth/{provider}',
    auth: false,
    body: false,
    status: 302,
    actions: ['PutItem'],
    indexes: [],
    publicUrl: true,
    oauth: 'public',
  },
  {
    name: 'auth-oauth-token',
    method: 'POST',
    path: '/api/auth/oauth/token',
    auth: false,
    body: true,
    status: 200,
    actions: ['GetItem', 'UpdateItem', 'PutItem', 'DeleteItem', 'Query', 'BatchWriteItem'],
    indexes: [],
    signs: true,
  },
  {
    name: 'auth-identities-list',
    method: 'GET',
    path: '/api/auth/identities',
    auth: true,
    body: false,
    status: 200,
    actions: AUTH,
    indexes: [],
  },
  {
    name: 'auth-identities-link',
    method: 'POST',
    path: '/api/auth/identities',
    auth: true,
    body: true,
    status: 200,
    actions: [...AUTH, 'PutItem'],
    indexes: [],
    publicUrl: true,
    oauth: 'public',
    // The URL carries the flow's state: not kept under an Idempotency-Key (a retry starts a new flow).
    secretAnswer: true,
  },
  {
    name: 'auth-identities-delete',
    method: 'DELETE',
    path: '/api/auth/identities/{identityId}',
    auth: true,
    body: false,
    status: 200,
    // The unlink ends the account's other sessions: Query them, BatchWriteItem them away.
    actions: [...AUTH, 'UpdateItem', 'PutItem', 'DeleteItem', 'Query', 'BatchWriteItem'],
    indexes: [],
  },
  {
    name: 'auth-refresh',
    method: 'POST',
    path: '/api/auth/refresh',
    auth: false,
    body: true,
    status: 200,
    actions: ['GetItem', 'BatchGetItem', 'UpdateItem', 'PutItem', 'BatchWriteItem'],
    indexes: [],
    signs: true,
    reservedConcurrency: 10,
  },
  {
    name: 'auth-signout',
    method: 'POST',
    path: '/api/auth/signout',
    auth: true,
    body: false,
    status: 200,
    actions: [...AUTH, 'DeleteItem', 'Query', 'BatchWriteItem', 'PutItem', 'UpdateItem'],
    indexes: [],
  },
  { name: 'auth-user', method: 'GET', path: '/api/auth/user', auth: true, body: false, status: 200, actions: AUTH, indexes: [] },
  {
    name: 'auth-user-update',
    method: 'PUT',
    path: '/api/auth/user',
    auth: true,
    body: true,
    status: 200,
    actions: [...AUTH, 'UpdateItem', 'PutItem', 'Query', 'BatchWriteItem'],
    indexes: [],
    files: COMMON_PASSWORDS,
  },
  {
    name: 'auth-user-delete',
    method: 'DELETE',
    path: '/api/auth/user',
    auth: true,
    body: true,
    status: 200,
    actions: [...AUTH, 'Query', 'UpdateItem', 'DeleteItem', 'BatchWriteItem', 'PutItem'],
    indexes: ['gsi1'],
  },
  {
    name: 'auth-verify',
    method: 'POST',
    path: '/api/auth/verify',
    auth: false,
    body: true,
    status: 200,
    actions: ['GetItem', 'UpdateItem', 'DeleteItem', 'PutItem'],
    indexes: [],
  },
  {
    name: 'auth-verify-resend',
    method: 'POST',
    path: '/api/auth/verify/resend',
    auth: true,
    body: false,
    status: 200,
    actions: [...AUTH, 'UpdateItem', 'PutItem', 'DeleteItem'],
    indexes: [],
  },
  {
    name: 'auth-recover',
    method: 'POST',
    path: '/api/auth/recover',
    auth: false,
    body: true,
    status: 200,
    actions: ['UpdateItem', 'PutItem'],
    indexes: [],
  },
  {
    name: 'auth-reset',
    method: 'POST',
    path: '/api/auth/reset',
    auth: false,
    body: true,
    status: 200,
    actions: ['GetItem', 'UpdateItem', 'DeleteItem', 'PutItem', 'Query', 'BatchWriteItem'],
    indexes: [],
    signs: true,
    files: COMMON_PASSWORDS,
  },
  {
    name: 'auth-sessions-list',
    method: 'GET',
    path: '/api/auth/sessions',
    auth: true,
    body: false,
    status: 200,
    actions: [...AUTH, 'Query'],
    indexes: [],
    pages: true,
  },
  {
    name: 'auth-sessions-delete',
    method: 'DELETE',
    path: '/api/auth/sessions/{sessionId}',
    auth: true,
    body: false,
    status: 200,
    actions: [...AUTH, 'DeleteItem'],
    indexes: [],
  },
  // Second factors (lib/identity/mfa/, docs/mfa.md).
  { name: 'auth-factors-list', method: 'GET', path: '/api/auth/factors', auth: true, body: false, status: 200, actions: AUTH, indexes: [] },
  {
    name: 'auth-factors-enrol',
    method: 'POST',
    path: '/api/auth/factors',
    auth: true,
    body: true,
    status: 201,
    actions: [...AUTH, 'PutItem', 'UpdateItem'],
    indexes: [],
    publicUrl: true,
    seals: true,
    secretAnswer: true,
  },
  {
    name: 'auth-factors-rename',
    method: 'PUT',
    path: '/api/auth/factors/{factorId}',
    auth: true,
    body: true,
    status: 200,
    actions: [...AUTH, 'UpdateItem'],
    indexes: [],
  },
  {
    name: 'auth-factors-delete',
    method: 'DELETE',
    path: '/api/auth/factors/{factorId}',
    auth: true,
    body: false,
    status: 200,
    actions: [...AUTH, 'UpdateItem', 'DeleteItem', 'Query', 'BatchWriteItem'],
    indexes: [],
  },
  {
    name: 'auth-factors-challenge',
    method: 'POST',
    path: '/api/auth/factors/{factorId}/challenge',
    auth: true,
    body: true,
    status: 201,
    actions: [...AUTH, 'PutItem', 'UpdateItem', 'DeleteItem'],
    indexes: [],
    publicUrl: true,
  },
  {
    name: 'auth-factors-verify',
    method: 'POST',
    path: '/api/auth/factors/{factorId}/verify',
    auth: true,
    body: true,
    status: 200,
    actions: [...AUTH, 'UpdateItem', 'DeleteItem', 'PutItem', 'Query', 'BatchWriteItem'],
    indexes: [],
    publicUrl: true,
    signs: true,
    seals: true,
    secretAnswer: true,
  },
  {
    name: 'auth-recovery-codes-create',
    method: 'POST',
    path: '/api/auth/recovery-codes',
    auth: true,
    body: false,
    status: 201,
    actions: [...AUTH, 'PutItem', 'ConditionCheckItem'],
    indexes: [],
    secretAnswer: true,
  },
  {
    name: 'auth-recovery-codes-verify',
    method: 'POST',
    path: '/api/auth/recovery-codes/verify',
    auth: true,
    body: true,
    status: 200,
    actions: [...AUTH, 'UpdateItem', 'PutItem'],
    indexes: [],
    signs: true,
    secretAnswer: true,
  },
  // Signing in with a passkey alone (lib/identity/mfa/passkey-sign-in.ts): a challenge, then its answer.
  {
    name: 'auth-passkeys-challenge',
    method: 'POST',
    path: '/api/auth/passkeys/challenge',
    auth: false,
    body: false,
    status: 201,
    actions: ['UpdateItem', 'PutItem'],
    indexes: [],
    publicUrl: true,
  },
  {
    name: 'auth-passkeys-sign-in',
    method: 'POST',
    path: '/api/auth/passkeys/sign-in',
    auth: false,
    body: true,
    status: 200,
    actions: ['GetItem', 'BatchGetItem', 'UpdateItem', 'DeleteItem', 'PutItem', 'Query', 'BatchWriteItem'],
    indexes: [],
    publicUrl: true,
    signs: true,
    secretAnswer: true,
  },

  { name: 'jwks', method: 'GET', path: '/.well-known/jwks.json', auth: false, body: false, status: 200, actions: ['GetItem'], indexes: [] },
  {
    name: 'openid-configuration',
    method: 'GET',
    path: '/.well-known/openid-configuration',
    auth: false,
    body: false,
    status: 200,
    actions: [],
    indexes: [],
  },
  { name: 'openapi', method: 'GET', path: '/api/openapi.json', auth: false, body: false, status: 200, actions: [], indexes: [] },
  { name: 'docs', method: 'GET', path: '/docs', auth: false, body: false, status: 200, actions: [], indexes: [] },
  {
    name: 'docs-assets',
    method: 'GET',
    path: '/docs/{asset}',
    auth: false,
    body: false,
    status: 200,
    actions: [],
    indexes: [],
    files: SWAGGER_UI,
  },
  {
    name: 'teams-list',
    method: 'GET',
    path: '/api/teams',
    auth: true,
    body: false,
    status: 200,
    actions: [...AUTH, 'Query'],
    indexes: ['gsi1'],
    pages: true,
  },
  {
    name: 'teams-create',
    method: 'POST',
    path: '/api/teams',
    auth: true,
    body: true,
    status: 201,
    actions: [...AUTH, 'PutItem', 'UpdateItem', 'DeleteItem'],
    indexes: [],
  },
  { name: 'teams-get', method: 'GET', path: '/api/teams/{slug}', auth: true, body: false, status: 200, actions: AUTH, indexes: [] },
  {
    name: 'teams-update',
    method: 'PUT',
    path: '/api/teams/{slug}',
    auth: true,
    body: true,
    status: 200,
    actions: [...AUTH, 'UpdateItem', 'PutItem', 'DeleteItem', 'ConditionCheckItem'],
    indexes: [],
  },
  {
    name: 'teams-delete',
    method: 'DELETE',
    path: '/api/teams/{slug}',
    auth: true,
    body: false,
    status: 200,
    actions: [...AUTH, 'DeleteItem', 'ConditionCheckItem', 'PutItem'],
    indexes: [],
  },
  {
    name: 'audit-list',
    method: 'GET',
    path: '/api/teams/{slug}/audit',
    auth: true,
    body: false,
    status: 200,
    actions: [...AUTH, 'Query'],
    indexes: ['gsi1'],
    pages: true,
  },
  // Signed webhooks: the endpoints (lib/events/webhooks/endpoints.ts; docs/webhooks.md).
  {
    name: 'webhooks-create',
    method: 'POST',
    path: '/api/teams/{slug}/webhooks',
    auth: true,
    body: true,
    status: 201,
    actions: [...AUTH, 'PutItem', 'UpdateItem', 'ConditionCheckItem', 'DeleteItem'],
    indexes: [],
  },
  {
    name: 'webhooks-list',
    method: 'GET',
    path: '/api/teams/{slug}/webhooks',
    auth: true,
    body: false,
    status: 200,
    actions: [...AUTH, 'Query'],
    indexes: [],
    pages: true,
  },
  {
    name: 'webhooks-delete',
    method: 'DELETE',
    path: '/api/teams/{slug}/webhooks/{id}',
    auth: true,
    body: false,
    status: 200,
    actions: [...AUTH, 'DeleteItem', 'UpdateItem', 'ConditionCheckItem', 'PutItem'],
    indexes: [],
  },
  // A team's domains and joining through them (lib/teams/domains/, docs/domains.md).
  {
    name: 'teams-domains-list',
    method: 'GET',
    path: '/api/teams/{slug}/domains',
    auth: true,
    body: false,
    status: 200,
    actions: [...AUTH, 'Query'],
    indexes: [],
  },
  {
    name: 'teams-domains-create',
    method: 'POST',
    path: '/api/teams/{slug}/domains',
    auth: true,
    body: true,
    status: 201,
    actions: [...AUTH, 'UpdateItem', 'PutItem', 'ConditionCheckItem', 'DeleteItem'],
    indexes: [],
  },
  {
    name: 'teams-domains-update',
    method: 'PUT',
    path: '/api/teams/{slug}/domains/{domain}',
    auth: true,
    body: true,
    status: 200,
    actions: [...AUTH, 'UpdateItem', 'ConditionCheckItem', 'PutItem'],
    indexes: [],
  },
  {
    name: 'teams-domains-delete',
    method: 'DELETE',
    path: '/api/teams/{slug}/domains/{domain}',
    auth: true,
    body: false,
    status: 200,
    actions: [...AUTH, 'DeleteItem', 'UpdateItem', 'ConditionCheckItem', 'PutItem'],
    indexes: [],
  },
  // Looks the TXT record up in DNS (DNS_SERVERS locally; the function's own resolver deployed).
  {
    name: 'teams-domains-verify',
    method: 'POST',
    path: '/api/teams/{slug}/domains/{domain}/verify',
    auth: true,
    body: false,
    status: 200,
    actions: [...AUTH, 'UpdateItem', 'ConditionCheckItem', 'PutItem', 'DeleteItem'],
    indexes: [],
  },
  {
    name: 'teams-joinable',
    method: 'GET',
    path: '/api/joinable-teams',
    auth: true,
    body: false,
    status: 200,
    actions: AUTH,
    indexes: [],
  },
  {
    name: 'teams-join',
    method: 'POST',
    path: '/api/teams/{slug}/join',
    auth: true,
    body: false,
    status: 200,
    actions: [...AUTH, 'PutItem', 'ConditionCheckItem', 'DeleteItem', 'UpdateItem'],
    indexes: [],
  },
  {
    name: 'teams-join-requests',
    method: 'GET',
    path: '/api/teams/{slug}/join-requests',
    auth: true,
    body: false,
    status: 200,
    actions: [...AUTH, 'Query'],
    indexes: [],
    pages: true,
  },
  {
    name: 'teams-join-accept',
    method: 'POST',
    path: '/api/teams/{slug}/join-requests/{id}',
    auth: true,
    body: false,
    status: 200,
    actions: [...AUTH, 'DeleteItem', 'PutItem', 'ConditionCheckItem', 'UpdateItem'],
    indexes: [],
  },
  {
    name: 'teams-join-decline',
    method: 'DELETE',
    path: '/api/teams/{slug}/join-requests/{id}',
    auth: true,
    body: false,
    status: 200,
    actions: [...AUTH, 'DeleteItem', 'ConditionCheckItem', 'PutItem'],
    indexes: [],
  },
  // The delivery log of an endpoint, and a replay of one of its deliveries (lib/events/webhooks/deliveries.ts).
  {
    name: 'webhooks-deliveries',
    method: 'GET',
    path: '/api/teams/{slug}/webhooks/{id}/deliveries',
    auth: true,
    body: false,
    status: 200,
    actions: [...AUTH, 'Query'],
    indexes: [],
    pages: true,
  },
  {
    name: 'webhooks-replay',
    method: 'POST',
    path: '/api/teams/{slug}/webhooks/{id}/deliveries/{deliveryId}/replay',
    auth: true,
    body: false,
    status: 200,
    actions: [...AUTH, 'PutItem', 'UpdateItem', 'DeleteItem'],
    indexes: [],
    webhookQueue: true,
  },
  {
    name: 'members-list',
    method: 'GET',
    path: '/api/teams/{slug}/members',
    auth: true,
    body: false,
    status: 200,
    actions: [...AUTH, 'Query'],
    indexes: ['gsi2'],
    pages: true,
  },
  {
    name: 'members-update-role',
    method: 'PUT',
    path: '/api/teams/{slug}/members/{memberId}',
    auth: true,
    body: true,
    status: 200,
    actions: [...AUTH, 'Query', 'UpdateItem', 'ConditionCheckItem', 'PutItem'],
    indexes: ['gsi2'],
  },
  {
    name: 'members-remove',
    method: 'DELETE',
    path: '/api/teams/{slug}/members/{memberId}',
    auth: true,
    body: false,
    status: 200,
    actions: [...AUTH, 'Query', 'DeleteItem', 'UpdateItem', 'ConditionCheckItem', 'PutItem'],
    indexes: ['gsi2'],
  },
  // Ownership transfer by consent (lib/teams/transfers.ts).
  {
    name: 'transfer-create',
    method: 'POST',
    path: '/api/teams/{slug}/transfer',
    auth: true,
    body: true,
    status: 201,
    actions: [...AUTH, 'Query', 'PutItem', 'ConditionCheckItem', 'UpdateItem', 'DeleteItem'],
    indexes: ['gsi2'],
  },
  {
    name: 'transfer-accept',
    method: 'POST',
    path: '/api/teams/{slug}/transfer/accept',
    auth: true,
    body: false,
    status: 200,
    actions: [...AUTH, 'UpdateItem', 'DeleteItem', 'ConditionCheckItem', 'PutItem'],
    indexes: [],
  },
  {
    name: 'transfer-decline',
    method: 'POST',
    path: '/api/teams/{slug}/transfer/decline',
    auth: true,
    body: false,
    status: 200,
    actions: [...AUTH, 'DeleteItem', 'PutItem', 'UpdateItem'],
    indexes: [],
  },
  {
    name: 'transfer-cancel',
    method: 'DELETE',
    path: '/api/teams/{slug}/transfer',
    auth: true,
    body: false,
    status: 200,
    actions: [...AUTH, 'DeleteItem', 'PutItem'],
    indexes: [],
  },
  {
    name: 'invites-create',
    method: 'POST',
    path: '/api/teams/{slug}/invites',
    auth: true,
    body: true,
    status: 201,
    actions: [...AUTH, 'PutItem', 'UpdateItem', 'ConditionCheckItem', 'DeleteItem'],
    indexes: [],
  },
  {
    name: 'invites-bulk',
    method: 'POST',
    path: '/api/teams/{slug}/invites/bulk',
    auth: true,
    body: true,
    status: 200,
    // invites-create's, row by row.
    actions: [...AUTH, 'PutItem', 'UpdateItem', 'ConditionCheckItem', 'DeleteItem'],
    indexes: [],
  },
  {
    name: 'invites-list',
    method: 'GET',
    path: '/api/teams/{slug}/invites',
    auth: true,
    body: false,
    status: 200,
    actions: [...AUTH, 'Query'],
    indexes: ['gsi1'],
    pages: true,
  },
  {
    name: 'invites-get',
    method: 'GET',
    path: '/api/teams/{slug}/invites/{id}',
    auth: true,
    body: false,
    status: 200,
    actions: [...AUTH, 'Query'],
    indexes: ['gsi1'],
  },
  {
    name: 'invites-resend',
    method: 'POST',
    path: '/api/teams/{slug}/invites/{id}/resend',
    auth: true,
    body: false,
    status: 200,
    actions: [...AUTH, 'Query', 'UpdateItem', 'PutItem', 'ConditionCheckItem', 'DeleteItem'],
    indexes: ['gsi1'],
  },
  {
    name: 'invites-delete',
    method: 'DELETE',
    path: '/api/teams/{slug}/invites/{id}',
    auth: true,
    body: false,
    status: 200,
    actions: [...AUTH, 'Query', 'UpdateItem', 'DeleteItem', 'ConditionCheckItem', 'PutItem'],
    indexes: ['gsi1'],
  },
  {
    name: 'my-invites-list',
    method: 'GET',
    path: '/api/invites',
    auth: true,
    body: false,
    status: 200,
    actions: [...AUTH, 'Query'],
    indexes: ['gsi2'],
    pages: true,
  },
  { name: 'my-invites-get', method: 'GET', path: '/api/invites/{uuid}', auth: true, body: false, status: 200, actions: AUTH, indexes: [] },
  {
    name: 'invites-accept',
    method: 'POST',
    path: '/api/invites/{uuid}/accept',
    auth: true,
    body: false,
    status: 200,
    actions: [...AUTH, 'UpdateItem', 'DeleteItem', 'PutItem', 'ConditionCheckItem'],
    indexes: [],
  },
  {
    name: 'invites-decline',
    method: 'POST',
    path: '/api/invites/{uuid}/decline',
    auth: true,
    body: false,
    status: 200,
    actions: [...AUTH, 'UpdateItem', 'DeleteItem', 'PutItem'],
    indexes: [],
  },
  // The Supabase-compatible API (lib/gotrue/, docs/supabase.md): GoTrue's paths and bodies over
  // the same use cases, for @supabase/auth-js pointed at {api}/auth/v1.
  {
    name: 'gotrue-signup',
    method: 'POST',
    path: '/auth/v1/signup',
    auth: false,
    body: true,
    status: 200,
    actions: ['GetItem', 'PutItem', 'UpdateItem', 'DeleteItem'],
    indexes: [],
    signs: true,
    files: COMMON_PASSWORDS,
    dialect: 'gotrue',
  },
  {
    name: 'gotrue-token',
    method: 'POST',
    path: '/auth/v1/token',
    auth: false,
    body: true,
    status: 200,
    // Sign-in's and refresh's.
    // Sign-in's, refresh's and a provider code's (used up by a DeleteItem).
    actions: ['GetItem', 'BatchGetItem', 'UpdateItem', 'PutItem', 'DeleteItem', 'Query', 'BatchWriteItem'],
    indexes: [],
    signs: true,
    dialect: 'gotrue',
  },
  // Provider sign-in in GoTrue's shapes (docs/sso.md): auth-js's signInWithOAuth, linkIdentity, unlinkIdentity.
  {
    name: 'gotrue-authorize',
    method: 'GET',
    path: '/auth/v1/authorize',
    auth: false,
    body: false,
    status: 302,
    actions: ['PutItem'],
    indexes: [],
    publicUrl: true,
    oauth: 'public',
    dialect: 'gotrue',
  },
  {
    name: 'auth-oauth-callback',
    method: 'GET',
    path: '/auth/v1/callback',
    auth: false,
    body: false,
    status: 302,
    actions: ['GetItem', 'PutItem', 'UpdateItem', 'DeleteItem'],
    indexes: [],
    publicUrl: true,
    oauth: 'secret',
  },
  {
    name: 'gotrue-identities-authorize',
    method: 'GET',
    path: '/auth/v1/user/identities/authorize',
    auth: true,
    body: false,
    status: 200,
    actions: [...AUTH, 'PutItem'],
    indexes: [],
    publicUrl: true,
    oauth: 'public',
    dialect: 'gotrue',
  },
  {
    name: 'gotrue-identities-delete',
    method: 'DELETE',
    path: '/auth/v1/user/identities/{identityId}',
    auth: true,
    body: false,
    status: 200,
    // The unlink ends the account's other sessions: Query them, BatchWriteItem them away.
    actions: [...AUTH, 'UpdateItem', 'PutItem', 'DeleteItem', 'Query', 'BatchWriteItem'],
    indexes: [],
    dialect: 'gotrue',
  },
  {
    name: 'gotrue-user',
    method: 'GET',
    path: '/auth/v1/user',
    auth: true,
    body: false,
    status: 200,
    actions: AUTH,
    indexes: [],
    dialect: 'gotrue',
  },
  {
    name: 'gotrue-user-update',
    method: 'PUT',
    path: '/auth/v1/user',
    auth: true,
    body: true,
    status: 200,
    actions: [...AUTH, 'UpdateItem', 'PutItem', 'Query', 'BatchWriteItem'],
    indexes: [],
    files: COMMON_PASSWORDS,
    dialect: 'gotrue',
  },
  {
    name: 'gotrue-factors-enrol',
    method: 'POST',
    path: '/auth/v1/factors',
    auth: true,
    body: true,
    status: 200,
    actions: [...AUTH, 'PutItem', 'UpdateItem'],
    indexes: [],
    publicUrl: true,
    seals: true,
    dialect: 'gotrue',
  },
  {
    name: 'gotrue-factors-challenge',
    method: 'POST',
    path: '/auth/v1/factors/{factorId}/challenge',
    auth: true,
    body: true,
    status: 200,
    actions: [...AUTH, 'PutItem'],
    indexes: [],
    publicUrl: true,
    dialect: 'gotrue',
  },
  {
    name: 'gotrue-factors-verify',
    method: 'POST',
    path: '/auth/v1/factors/{factorId}/verify',
    auth: true,
    body: true,
    status: 200,
    actions: [...AUTH, 'UpdateItem', 'DeleteItem', 'PutItem', 'Query', 'BatchWriteItem'],
    indexes: [],
    publicUrl: true,
    signs: true,
    seals: true,
    dialect: 'gotrue',
  },
  {
    name: 'gotrue-factors-delete',
    method: 'DELETE',
    path: '/auth/v1/factors/{factorId}',
    auth: true,
    body: false,
    status: 200,
    actions: [...AUTH, 'UpdateItem', 'DeleteItem', 'Query', 'BatchWriteItem'],
    indexes: [],
    dialect: 'gotrue',
  },
  {
    name: 'gotrue-logout',
    method: 'POST',
    path: '/auth/v1/logout',
    auth: true,
    body: false,
    status: 200,
    actions: [...AUTH, 'DeleteItem', 'Query', 'BatchWriteItem'],
    indexes: [],
    dialect: 'gotrue',
  },
  {
    name: 'gotrue-recover',
    method: 'POST',
    path: '/auth/v1/recover',
    auth: false,
    body: true,
    status: 200,
    actions: ['UpdateItem', 'PutItem'],
    indexes: [],
    dialect: 'gotrue',
  },
  {
    name: 'gotrue-resend',
    method: 'POST',
    path: '/auth/v1/resend',
    auth: false,
    body: true,
    status: 200,
    actions: ['UpdateItem', 'PutItem'],
    indexes: [],
    dialect: 'gotrue',
  },
  {
    name: 'gotrue-verify',
    method: 'POST',
    path: '/auth/v1/verify',
    auth: false,
    body: true,
    status: 200,
    actions: ['GetItem', 'UpdateItem', 'DeleteItem', 'PutItem'],
    indexes: [],
    signs: true,
    dialect: 'gotrue',
  },
  {
    name: 'gotrue-jwks',
    method: 'GET',
    path: '/auth/v1/.well-known/jwks.json',
    auth: false,
    body: false,
    status: 200,
    actions: ['GetItem'],
    indexes: [],
    dialect: 'gotrue',
  },
  {
    name: 'gotrue-settings',
    method: 'GET',
    path: '/auth/v1/settings',
    auth: false,
    body: false,
    status: 200,
    actions: [],
    indexes: [],
    // `external` names the configured providers.
    oauth: 'public',
    dialect: 'gotrue',
  },
  // The pages behind the links Roster mails (lib/pages/): HTML at the API's own URL.
  {
    name: 'page-invite',
    method: 'GET',
    path: '/invites/{uuid}',
    auth: false,
    body: false,
    status: 200,
    actions: ['BatchGetItem'],
    indexes: [],
  },
  { name: 'page-verify', method: 'GET', path: '/verify', auth: false, body: false, status: 200, actions: [], indexes: [] },
  { name: 'page-reset', method: 'GET', path: '/reset', auth: false, body: false, status: 200, actions: [], indexes: [] },
  {
    name: 'page-unsubscribe',
    method: 'GET',
    path: '/unsubscribe',
    auth: false,
    body: false,
    status: 200,
    actions: ['GetItem'],
    indexes: [],
  },
  // The one-click POST of RFC 8058 and the page's buttons: a form body, not JSON (lib/http/form-body.ts).
  {
    name: 'unsubscribe',
    method: 'POST',
    path: '/unsubscribe',
    auth: false,
    body: false,
    status: 200,
    actions: ['GetItem', 'UpdateItem', 'PutItem'],
    indexes: [],
  },
  // The account security page (lib/identity/mfa/security-page.ts): its session is a cookie, not the Authorization header.
  {
    name: 'page-security',
    method: 'GET',
    path: '/account/security',
    auth: false,
    body: false,
    status: 200,
    actions: AUTH,
    indexes: [],
  },
  {
    name: 'page-security-action',
    method: 'POST',
    path: '/account/security',
    auth: false,
    body: false,
    status: 200,
    actions: [...AUTH, 'UpdateItem', 'PutItem', 'DeleteItem', 'Query', 'BatchWriteItem', 'ConditionCheckItem'],
    indexes: [],
    signs: true,
    seals: true,
    publicUrl: true,
  },
  {
    name: 'page-assets',
    method: 'GET',
    path: '/assets/{asset}',
    auth: false,
    body: false,
    status: 200,
    actions: [],
    indexes: [],
    files: ['lib/pages/page.js', 'lib/pages/page.css', 'lib/pages/icon.svg'],
  },
] as const satisfies readonly Route[];

export type RouteName = (typeof ROUTES)[number]['name'];

/** Every function's limits; the stack and the local server both read them. */
export const FUNCTION_DEFAULTS = { timeoutSeconds: 10, memoryMb: 1024 } as const;

/** The function API Gateway's default route calls: 404, or 405 with `Allow`, in our envelope. */
export const FALLBACK = 'fallback';

/** The routes that honour `Idempotency-Key`: the POSTs with a token (docs/idempotency.md says why not the others). */
export const isIdempotent = (route: Pick<Route, 'method' | 'auth' | 'dialect' | 'secretAnswer'>): boolean =>
  route.method === 'POST' && route.auth && route.dialect === undefined && route.secretAnswer !== true;

export const routeNamed = (name: RouteName): Route => ROUTES.find((r) => r.name === name) as Route;

const segments = (path: string): string[] => path.split('/').slice(1);
const isParam = (segment: string): boolean => segment.startsWith('{');

/** Path parameters of `template` in `path`, or null when the path does not fit the template. */
const fit = (template: string, path: string): Record<string, string> | null => {
  const want = segments(template);
  const got = segments(path);
  if (want.length !== got.length) return null;
  const params: Record<string, string> = {};
  for (const [i, w] of want.entries()) {
    const g = got[i] as string;
    if (isParam(w)) {
      if (g === '') return null;
      params[w.slice(1, -1)] = decodeURIComponent(g);
    } else if (w !== g) return null;
  }
  return params;
};

/** How many literal segments a template has: API Gateway prefers the most specific route. */
const specificity = (template: string): number => segments(template).filter((s) => !isParam(s)).length;

export type Match = { route: Route; params: Record<string, string> } | { allow: string[] } | null;

/** Matches like API Gateway: the most specific template wins; a known path with another method is 405. */
export const matchRoute = (method: string, path: string): Match => {
  let fits: { route: Route; params: Record<string, string> }[];
  try {
    fits = ROUTES.flatMap((route: Route) => {
      const params = fit(route.path, path);
      return params ? [{ route, params }] : [];
    });
  } catch {
    return null; // a malformed percent-escape matches no route
  }
  if (fits.length === 0) return null;
  const best = Math.max(...fits.map((f) => specificity(f.route.path)));
  const candidates = fits.filter((f) => specificity(f.route.path) === best);
  return candidates.find((f) => f.route.method === method) ?? { allow: [...new Set(candidates.map((f) => f.route.method))] };
};
