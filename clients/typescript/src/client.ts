import { type Caller, createCaller } from './caller.js';
import { type AuditResource, auditResource } from './resources/audit.js';
import { type AuthResource, authResource } from './resources/auth.js';
import { type InvitesResource, invitesResource } from './resources/invites.js';
import { type MembersResource, membersResource } from './resources/members.js';
import { type MyInvitesResource, myInvitesResource } from './resources/my-invites.js';
import { type TeamsResource, teamsResource } from './resources/teams.js';
import { type TransfersResource, transfersResource } from './resources/transfers.js';
import { type WebhooksResource, webhooksResource } from './resources/webhooks.js';
import type { Jwks, Session } from './types.js';

export interface RosterClientOptions {
  /** Where the API is served, e.g. `https://api.example.com` (no `/api`). */
  baseUrl: string;
  /** The fetch to send with (default: the global one), e.g. to add logging or for tests. */
  fetch?: (request: Request) => Promise<Response>;
  /** A session saved earlier from `onSessionChange`, to go on signed in. */
  session?: Session | null;
  /** Called whenever the session changes: sign-in, sign-up, each refresh, and null on sign-out. */
  onSessionChange?: (session: Session | null) => void;
  /** Refresh when the access token has less than this many seconds left (default 60). */
  refreshMarginSeconds?: number;
}

/** The Roster API, typed from its OpenAPI document. */
export class RosterClient {
  readonly auth: AuthResource;
  readonly teams: TeamsResource;
  readonly members: MembersResource;
  /** A team's invites (for its OWNERs and ADMINs). */
  readonly invites: InvitesResource;
  /** The invites addressed to the signed-in user. */
  readonly myInvites: MyInvitesResource;
  /** A team's ownership transfer. */
  readonly transfers: TransfersResource;
  /** A team's audit log (for its OWNERs and ADMINs). */
  readonly audit: AuditResource;
  /** A team's webhook endpoints (for its OWNERs and ADMINs). */
  readonly webhooks: WebhooksResource;
  readonly #caller: Caller;

  constructor(options: RosterClientOptions) {
    const caller = createCaller({
      baseUrl: options.baseUrl,
      fetch: options.fetch ?? ((request) => globalThis.fetch(request)),
      session: options.session ?? null,
      refreshMarginSeconds: options.refreshMarginSeconds ?? 60,
      onSessionChange: options.onSessionChange ?? (() => {}),
    });
    this.#caller = caller;
    this.auth = authResource(caller);
    this.teams = teamsResource(caller);
    this.members = membersResource(caller);
    this.invites = invitesResource(caller);
    this.myInvites = myInvitesResource(caller);
    this.transfers = transfersResource(caller);
    this.audit = auditResource(caller);
    this.webhooks = webhooksResource(caller);
  }

  /** The current session (tokens and user), or null when signed out. */
  get session(): Session | null {
    return this.#caller.session.current;
  }

  /** The public keys that verify access tokens (a bare JWK Set). */
  async jwks(): Promise<Jwks> {
    const { api, anonymous } = this.#caller;
    return (await anonymous(() => api.GET('/.well-known/jwks.json'))).data;
  }
}
