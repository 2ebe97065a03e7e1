import type { EntityItem } from 'electrodb';
import type { Actor, Claims } from '#lib/auth/session-items.ts';
import { type TeamAccess, actorStillHolds, pageThenMember, requireMember } from '#lib/auth/team-access.ts';
import { canReadAudit } from '#lib/auth/team-rules.ts';
import { config } from '#lib/core/config.ts';
import { AppError, notFound } from '#lib/core/errors.ts';
import { newId } from '#lib/core/ids.ts';
import { Page, type PageRequest } from '#lib/core/pagination.ts';
import { isoMillis } from '#lib/core/time.ts';
import type { AuditAction } from '#lib/db/entities/audit-actions.ts';
import type { webhookEndpoint } from '#lib/db/entities/webhooks.ts';
import { cursorAfter, queryPage } from '#lib/db/pages.ts';
import type { Db, Tx } from '#lib/db/service.ts';
import { commit, named, write } from '#lib/db/transactions.ts';
import { auditActor, audited } from '#lib/events/audit.ts';
import type { WebhookEndpoint, WebhookEndpointCreated } from '#lib/wire/responses.ts';
import type { WebhookInput } from '#lib/wire/schemas.ts';
import { RefusedUrl, checkedAddresses, parseWebhookUrl, systemResolver } from './addresses.ts';
import { newWebhookSecret } from './signing.ts';

type EndpointItem = EntityItem<ReturnType<typeof webhookEndpoint>>;

/** Endpoints one team may have: each event is sent to each, so this bounds a change's fan-out. */
export const MAX_WEBHOOK_ENDPOINTS = 10;

const NOT_FOUND = 'No webhook endpoint with that id in this team.';

const endpointView = (e: EndpointItem): WebhookEndpoint => ({
  id: e.endpointId,
  url: e.url,
  // Written only from WebhookBody's enum.
  events: e.events as AuditAction[],
  createdBy: { userId: e.createdByUserId },
  createdAt: e.createdAt,
});

/**
 * A webhook pushes the team's audit log out, so whoever may read the log may register, list and
 * delete endpoints: OWNER and ADMIN (403 for a MEMBER; 404 outside the team, as everywhere).
 */
const requireWebhookManager = async (db: Db, claims: Claims, slug: string): Promise<TeamAccess & { actor: Actor }> => {
  const access = await requireMember(db, slug, claims);
  if (!canReadAudit(access.me.role)) throw new AppError('forbidden');
  return access;
};

const refused = (reason: string) => new AppError('validation_failed', undefined, { fields: { url: reason } });

/** The URL as registration accepts it: 422 on `url` unless https, without credentials, and every address it resolves to public. */
const checkUrl = async (raw: string): Promise<void> => {
  try {
    const { host } = parseWebhookUrl(raw, config.webhooksAllowPrivateUrls);
    await checkedAddresses(host, config.webhooksAllowPrivateUrls, systemResolver);
  } catch (error) {
    if (error instanceof RefusedUrl) throw refused(error.message);
    throw error;
  }
};

/**
 * The count of the team's endpoints goes up by one, only while below the limit. An upsert, so it
 * also writes the team's gsi3 keys for the webhook sweep (lib/events/webhooks/sweep.ts), and its
 * watermark the first time only: a later create must not skip what the sweep has not checked yet.
 */
const countedUp = (tx: Tx, teamId: number, now: Date) =>
  tx.webhookCount
    .upsert({ teamId })
    .add({ endpoints: 1 })
    .ifNotExists({ sweepFrom: isoMillis(now) })
    .where((a, op) => `${op.notExists(a.endpoints)} OR ${op.lt(a.endpoints, MAX_WEBHOOK_ENDPOINTS)}`)
    .commit();

/** The count of the team's endpoints goes down by one. */
const countedDown = (tx: Tx, teamId: number) => tx.webhookCount.update({ teamId }).add({ endpoints: -1 }).commit();

/**
 * Registers an endpoint: the caller's rights first, then the URL (its host resolved, every address
 * public), then one transaction that writes it with a fresh secret, counts it under the team's
 * limit and checks that the team still exists and the caller still holds their role. The secret
 * is in this answer only.
 * Throws `not_found`, `forbidden`, `validation_failed` (`url`, or the limit), `conflict`.
 */
export const createWebhookEndpoint = async (
  db: Db,
  claims: Claims,
  slug: string,
  input: WebhookInput,
  now: Date,
): Promise<WebhookEndpointCreated> => {
  const { team, me, actor } = await requireWebhookManager(db, claims, slug);
  await checkUrl(input.url);
  const secret = newWebhookSecret();
  let created: EndpointItem | undefined;
  await commit(
    () => {
      const item: EndpointItem = {
        teamId: team.teamId,
        endpointId: newId(now),
        url: input.url,
        events: input.events,
        secret,
        createdByUserId: me.userId,
        createdAt: isoMillis(now),
      };
      created = item;
      return write(db, (tx) => [
        named('count', countedUp(tx, team.teamId, now)),
        // A fresh id that clashes with another of the team's is picked again.
        named('endpoint', tx.webhookEndpoint.create(item).commit()),
        named('actorRole', actorStillHolds(tx, me)),
        // The team's deletion leaves memberships to its cleanup: the team item says it still exists.
        named(
          'team',
          tx.team
            .check({ teamId: team.teamId })
            .where((a, op) => op.exists(a.name))
            .commit(),
        ),
        named(
          'audit',
          audited(
            tx,
            {
              teamId: team.teamId,
              action: 'webhook.created',
              actor: auditActor(actor, me.userId),
              target: { type: 'webhook', id: item.endpointId },
              changes: { url: { after: item.url }, events: { after: item.events } },
            },
            now,
          ),
        ),
      ]);
    },
    {
      count: () =>
        new AppError('validation_failed', `A team may have at most ${MAX_WEBHOOK_ENDPOINTS} webhook endpoints: delete one first.`, {
          fields: { '(body)': `the team already has ${MAX_WEBHOOK_ENDPOINTS} webhook endpoints` },
        }),
      endpoint: () => 'retry',
      actorRole: () => new AppError('conflict'),
      team: () => notFound(),
      audit: () => new AppError('conflict'),
    },
  );
  return { ...endpointView(created as EndpointItem), secret };
};

/** The team's endpoints in creation order, without their secrets: one Query of the team's webhook partition. */
export const listWebhookEndpoints = async (db: Db, claims: Claims, slug: string, request: PageRequest): Promise<Page<WebhookEndpoint>> => {
  const entity = db.entities.webhookEndpoint;
  const { page, me } = await pageThenMember(
    db,
    slug,
    claims,
    (teamId) =>
      queryPage(db, `webhooks ${teamId}`, (options) => entity.query.byTeam({ teamId }).go(options), request, cursorAfter(entity, 'byTeam')),
    () => [] as const,
  );
  if (!canReadAudit(me.role)) throw new AppError('forbidden');
  return new Page(page.items.map(endpointView), page.cursor);
};

/** Deletes an endpoint and counts it out, in one transaction. Throws `not_found`, `forbidden`, `conflict`. */
export const deleteWebhookEndpoint = async (
  db: Db,
  claims: Claims,
  slug: string,
  endpointId: number,
  now: Date,
): Promise<Record<string, never>> => {
  const { team, me, actor } = await requireWebhookManager(db, claims, slug);
  await commit(
    () =>
      write(db, (tx) => [
        named(
          'endpoint',
          tx.webhookEndpoint
            .delete({ teamId: team.teamId, endpointId })
            .where((a, op) => op.exists(a.url))
            .commit(),
        ),
        named('count', countedDown(tx, team.teamId)),
        named('actorRole', actorStillHolds(tx, me)),
        named(
          'audit',
          audited(
            tx,
            {
              teamId: team.teamId,
              action: 'webhook.deleted',
              actor: auditActor(actor, me.userId),
              target: { type: 'webhook', id: endpointId },
            },
            now,
          ),
        ),
      ]),
    {
      endpoint: () => notFound(NOT_FOUND),
      count: () => new AppError('conflict'),
      actorRole: () => new AppError('conflict'),
      audit: () => new AppError('conflict'),
    },
  );
  return {};
};
