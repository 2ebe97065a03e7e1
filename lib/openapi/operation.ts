import type * as z from 'zod/mini';
import type { ErrorCode } from '#lib/core/errors.ts';

/** How a route's success body is shaped. */
export type Success =
  /** `{ "data": <schema> }` */
  | { data: z.ZodMiniType }
  /** `{ "data": [<schema>…] }` with `limit`, `cursor` and the `Link` header. */
  | { page: z.ZodMiniType }
  /** The schema itself, not enveloped (the JWK Set). */
  | { bare: z.ZodMiniType }
  /** Not JSON of ours: the OpenAPI document, the docs page and its assets. */
  | { media: Record<string, { description: string }> }
  /** 302 to the URL it describes, no body: a route the browser is sent through (a provider sign-in). */
  | { redirect: string };

/** The document's sections, in order. */
export const TAGS = {
  Auth: 'Accounts, sign-in and tokens.',
  Sessions: "The signed-in user's sessions (devices).",
  'Second factors':
    "TOTP factors, passkeys, recovery codes and the step-up to an aal2 session (docs/mfa.md). A team that sets `requireMfa` answers an aal1 session's requests 403 `mfa_required`.",
  Teams: 'Teams the user belongs to.',
  Members: "A team's members and their roles: OWNER, ADMIN, MEMBER.",
  'Ownership transfer': "Handing a team's ownership to another member, with their consent.",
  Invites: "A team's invitations, managed by its owners and admins.",
  'My invites': 'Invitations addressed to the signed-in user.',
  Domains: "A team's verified e-mail domains, and joining a team through the domain of your confirmed address (docs/domains.md).",
  Webhooks: "A team's signed webhooks: its audit events POSTed to its own endpoints.",
  'Provider sign-in': 'Sign-in with Google, GitHub or any OpenID Connect provider, and the identities linked to an account (docs/sso.md).',
  Keys: 'Public keys for verifying access tokens elsewhere.',
  Documentation: 'This description and its reference page.',
  Pages: 'The pages behind the links in the e-mails Roster sends.',
  'Supabase-compatible':
    "GoTrue's auth API at /auth/v1 over the same accounts and sessions, so @supabase/auth-js works unchanged: GoTrue's bare bodies and error shape (`code`, `error_code`, `msg`), `Authorization: Bearer`.",
} as const;

export interface Operation {
  tag: keyof typeof TAGS;
  summary: string;
  description?: string;
  success: Success;
  /**
   * The route's own error codes. Those every route of its kind can answer (401 for a token, 400,
   * 413, 415 and 422 for a body, 404 for a path parameter, 500 and 503) are added by document.ts.
   */
  errors: readonly ErrorCode[];
  /** A request body to show (the schema says what is allowed). */
  example?: Record<string, unknown>;
  /** A form body (`application/x-www-form-urlencoded` or `multipart/form-data`), for the pages' POST. */
  form?: z.ZodMiniType;
}

/** The error code every write may answer: its transaction lost a race (409). */
export const WRITES = ['conflict'] as const;
