import type * as z from 'zod/mini';
import {
  AuditQuery,
  BulkInviteBody,
  InviteBody,
  PageQuery,
  RecoverBody,
  RefreshBody,
  ResetBody,
  RoleBody,
  SignInBody,
  SignOutQuery,
  SignUpBody,
  TeamBody,
  TeamUpdateBody,
  TransferBody,
  UserDeleteBody,
  UserUpdateBody,
  VerifyBody,
  WebhookBody,
} from '#lib/wire/schemas.ts';
import { ChallengeBody, EnrolBody, PasskeySignInBody, RecoveryCodeBody, RenameFactorBody, VerifyFactorBody } from '#lib/wire/schemas.ts';
import { DomainBody, DomainUpdateBody } from '#lib/wire/domains.ts';
import { CallbackQuery, LinkBody, ProviderStartQuery, ProviderTokenBody } from '#lib/wire/oauth.ts';
import type { RouteName } from './routes.ts';

export interface Request {
  body?: z.ZodMiniType;
  query?: z.ZodMiniType;
}

/**
 * What each route reads besides its path: the zod schema of its JSON body and of its query string.
 * endpoint() validates with exactly these, and the OpenAPI document is generated from them, so the
 * documented rules are the enforced ones. A route that is not listed reads neither.
 */
export const REQUESTS = {
  'auth-signup': { body: SignUpBody },
  'auth-signin': { body: SignInBody },
  'auth-refresh': { body: RefreshBody },
  'auth-signout': { query: SignOutQuery },
  'auth-user-update': { body: UserUpdateBody },
  'auth-user-delete': { body: UserDeleteBody },
  'auth-verify': { body: VerifyBody },
  'auth-recover': { body: RecoverBody },
  'auth-reset': { body: ResetBody },
  'auth-sessions-list': { query: PageQuery },
  'auth-factors-enrol': { body: EnrolBody },
  'auth-factors-rename': { body: RenameFactorBody },
  'auth-factors-challenge': { body: ChallengeBody },
  'auth-factors-verify': { body: VerifyFactorBody },
  'auth-passkeys-sign-in': { body: PasskeySignInBody },
  'auth-oauth-authorize': { query: ProviderStartQuery },
  'auth-oauth-token': { body: ProviderTokenBody },
  'auth-identities-link': { body: LinkBody },
  'auth-oauth-callback': { query: CallbackQuery },
  'teams-domains-create': { body: DomainBody },
  'teams-domains-update': { body: DomainUpdateBody },
  'teams-join-requests': { query: PageQuery },
  'auth-recovery-codes-verify': { body: RecoveryCodeBody },
  'teams-list': { query: PageQuery },
  'teams-create': { body: TeamBody },
  'teams-update': { body: TeamUpdateBody },
  'members-list': { query: PageQuery },
  'audit-list': { query: AuditQuery },
  'webhooks-create': { body: WebhookBody },
  'webhooks-list': { query: PageQuery },
  'webhooks-deliveries': { query: PageQuery },
  'members-update-role': { body: RoleBody },
  'invites-create': { body: InviteBody },
  'invites-bulk': { body: BulkInviteBody },
  'invites-list': { query: PageQuery },
  'transfer-create': { body: TransferBody },
  'my-invites-list': { query: PageQuery },
} as const satisfies Partial<Record<RouteName, Request>>;

/** What a route of the seed's API (`/api/...`) reads; the Supabase-compatible routes' is in requests-gotrue.ts. */
export const apiRequestOf = (name: RouteName): Request => (REQUESTS as Partial<Record<RouteName, Request>>)[name] ?? {};
