import type { RouteName } from '#lib/http/routes.ts';
import type { Operation } from './operation.ts';
import { AUTH_OPERATIONS } from './operations-auth.ts';
import { DOMAIN_OPERATIONS } from './operations-domains.ts';
import { GOTRUE_OPERATIONS } from './operations-gotrue.ts';
import { INVITE_OPERATIONS } from './operations-invites.ts';
import { MFA_OPERATIONS } from './operations-mfa.ts';
import { OAUTH_OPERATIONS } from './operations-oauth.ts';
import { TEAM_OPERATIONS } from './operations-teams.ts';

/** What the document says about each route; the route table says where it is and what it reads. */
export const OPERATIONS = {
  ...AUTH_OPERATIONS,
  ...MFA_OPERATIONS,
  ...OAUTH_OPERATIONS,
  ...TEAM_OPERATIONS,
  ...DOMAIN_OPERATIONS,
  ...INVITE_OPERATIONS,
  ...GOTRUE_OPERATIONS,
} as const satisfies Record<RouteName, Operation>;
