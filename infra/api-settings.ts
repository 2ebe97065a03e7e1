import { LambdaDeploymentConfig } from 'aws-cdk-lib/aws-codedeploy';
import { type RouteName } from '#lib/http/routes.ts';
import { routeGroup } from './monitoring/metrics.ts';

/** How the API functions are arranged in nested stacks, deployed and logged. */

/** The alias the HTTP API calls on every API function; CodeDeploy moves it from version to version. */
export const LIVE_ALIAS = 'live';

/**
 * How CodeDeploy moves an API function's alias to a new version with `-c gradualDeploy=true` (off
 * by default: each deploy waits for every canary): a tenth of the requests for five minutes, then
 * all, back to the old version as soon as one of the function's alarms fires.
 */
export const DEPLOYMENT_CONFIG = LambdaDeploymentConfig.CANARY_10PERCENT_5MINUTES;

/**
 * The nested stacks of the functions' stack that hold the API functions, by id, each with the route
 * groups it holds (infra/monitoring/metrics.ts routeGroup, the dashboard's rows). CloudFormation takes 500
 * resources per stack: each API function is 5 in its nested stack (function, role, log group,
 * version, alias; with gradual deploys 7: its health alarm and CodeDeploy group, and one 5xx alarm
 * per route group) and its route 3 in the parent (route, integration, permission). A route of a group not listed here fails the synth.
 */
export const FUNCTION_STACKS = {
  Auth: ['auth'],
  Teams: ['teams', 'members', 'transfer', 'audit', 'webhooks'],
  Invites: ['invites', 'my-invites'],
  Pages: ['docs', 'page', 'unsubscribe', 'fallback'],
  Supabase: ['gotrue'],
} as const satisfies Record<string, readonly string[]>;

export type FunctionStackId = keyof typeof FUNCTION_STACKS;

/** The nested stack an API function (a route name, or FALLBACK) lives in. */
export const functionStackOf = (name: string): FunctionStackId => {
  const group = routeGroup(name);
  const found = (Object.keys(FUNCTION_STACKS) as FunctionStackId[]).find((id) =>
    (FUNCTION_STACKS[id] as readonly string[]).includes(group),
  );
  if (!found) throw new Error(`${name}: its route group ${group} has no nested stack: add it to FUNCTION_STACKS (infra/api-settings.ts)`);
  return found;
};

/**
 * The routes that check a credential: a password (sign-up, sign-in, a password change or reset,
 * an account deletion, where a flood costs a password hash per request), a refresh token or a
 * mailed link's token, or that mail one (recovery). They get the stricter throttle.
 */
export const CREDENTIAL_ROUTES: readonly RouteName[] = [
  'auth-signup',
  'auth-signin',
  'auth-refresh',
  'auth-user-update',
  'auth-user-delete',
  'auth-verify',
  'auth-recover',
  'auth-reset',
  // A passkey sign-in checks a signature; the security page's forms sign in with a password.
  'auth-passkeys-challenge',
  'auth-passkeys-sign-in',
  'page-security-action',
  // A provider sign-in: each start writes a flow item and each callback asks the provider up to
  // three times (docs/sso.md); a code traded opens a session.
  'auth-oauth-authorize',
  'gotrue-authorize',
  'auth-oauth-callback',
  'auth-oauth-token',
];

/**
 * One JSON line per request. No header, query, path or body variable: those carry tokens,
 * passwords and invite ids (the route key names the route instead). `integrationRequestId` is the
 * function's request id, so a gateway line joins the function's own log line.
 */
export const ACCESS_LOG_FIELDS = {
  requestId: '$context.requestId',
  integrationRequestId: '$context.integration.requestId',
  sourceIp: '$context.identity.sourceIp',
  userAgent: '$context.identity.userAgent',
  requestTime: '$context.requestTime',
  httpMethod: '$context.httpMethod',
  routeKey: '$context.routeKey',
  status: '$context.status',
  protocol: '$context.protocol',
  responseLength: '$context.responseLength',
  responseLatency: '$context.responseLatency',
  integrationLatency: '$context.integrationLatency',
  /** What Lambda answered the gateway (a 429 or 5xx here is Lambda's, not the function's). */
  integrationStatus: '$context.integration.integrationStatus',
  integrationError: '$context.integrationErrorMessage',
  /** The gateway's own refusals (its throttle, a timeout), which never reach a function. */
  gatewayError: '$context.error.message',
  gatewayErrorType: '$context.error.responseType',
} as const;

/** `teams-create` -> `TeamsCreate`: construct ids from handler names. */
export const idOf = (name: string): string => name.replace(/(?:^|-)(\w)/g, (_match, letter: string) => letter.toUpperCase());
