import type { EntityItem } from 'electrodb';
import type { Claims } from '#lib/auth/session-items.ts';
import { memberOf, pageThenMember, teamIdOf } from '#lib/auth/team-access.ts';
import { canReadAudit } from '#lib/auth/team-rules.ts';
import { AppError, notFound } from '#lib/core/errors.ts';
import { Page, type PageRequest } from '#lib/core/pagination.ts';
import { isExpired } from '#lib/core/time.ts';
import { readTogether } from '#lib/db/batch-read.ts';
import type { AuditAction } from '#lib/db/entities/audit-actions.ts';
import type { webhookDelivery } from '#lib/db/entities/webhooks.ts';
import { cursorAfter, queryPage } from '#lib/db/pages.ts';
import type { Db } from '#lib/db/service.ts';
import { limitWebhookReplays } from '#lib/limits/webhook-replays.ts';
import type { WebhookDelivery, WebhookReplay } from '#lib/wire/responses.ts';
import { webhookQueue } from './queue.ts';

type DeliveryItem = EntityItem<ReturnType<typeof webhookDelivery>>;

const NO_ENDPOINT = 'No webhook endpoint with that id in this team.';
const NO_DELIVERY = 'No delivery with that id for this webhook endpoint.';

const deliveryView = (d: DeliveryItem): WebhookDelivery => ({
  id: d.deliveryId,
  eventId: d.entryId,
  // Written only from an audit entry's action.
  event: d.action as AuditAction,
  attempt: d.attempt,
  replay: d.replay,
  succeeded: d.succeeded,
  responseStatus: d.responseStatus ?? null,
  error: d.error ?? null,
  durationMs: d.durationMs,
  createdAt: d.createdAt,
  nextAttemptAt: d.nextAttemptAt ?? null,
});

/**
 * An endpoint's delivery log, newest first: one Query of its (team, endpoint) partition read between
 * the slug and the membership, the endpoint itself read with the membership (404 when it is not
 * this team's). OWNER and ADMIN, as for the endpoints (403 for a MEMBER).
 */
export const listDeliveries = async (
  db: Db,
  claims: Claims,
  slug: string,
  endpointId: number,
  request: PageRequest,
): Promise<Page<WebhookDelivery>> => {
  const entity = db.entities.webhookDelivery;
  const {
    page,
    me,
    also: [endpoint],
  } = await pageThenMember(
    db,
    slug,
    claims,
    (teamId) =>
      queryPage(
        db,
        `webhook deliveries ${teamId} ${endpointId}`,
        (options) => entity.query.byEndpoint({ teamId, endpointId }).go({ ...options, order: 'desc' }),
        request,
        cursorAfter(entity, 'byEndpoint'),
      ),
    (_items, _actor, teamId) => [[db.entities.webhookEndpoint, { teamId, endpointId }]] as const,
  );
  if (!canReadAudit(me.role)) throw new AppError('forbidden');
  if (!endpoint) throw notFound(NO_ENDPOINT);
  return new Page(page.items.map(deliveryView), page.cursor);
};

/**
 * Queues the event of one delivery to its endpoint again, as a new message whose attempts count
 * from 1 (each logged with `replay: true`). The team, the membership, the endpoint and the delivery
 * are read in one BatchGetItem after the slug; the event itself must still be in the audit log.
 * Each replay takes a token of the team's replay allowance (WEBHOOK_REPLAYS_PER_TEAM_HOUR): every
 * replay may become 8 POSTs to an address the team chose.
 * Throws `not_found` (team, endpoint, delivery or event), `forbidden`, `rate_limited`.
 */
export const replayDelivery = async (
  db: Db,
  claims: Claims,
  slug: string,
  endpointId: number,
  deliveryId: string,
  now: Date,
): Promise<WebhookReplay> => {
  const { teamId, actor } = await teamIdOf(db, slug, claims);
  const {
    me,
    also: [endpoint, delivery],
  } = await memberOf(db, teamId, slug, actor, [
    [db.entities.webhookEndpoint, { teamId, endpointId }],
    [db.entities.webhookDelivery, { teamId, endpointId, deliveryId }],
  ] as const);
  if (!canReadAudit(me.role)) throw new AppError('forbidden');
  if (!endpoint) throw notFound(NO_ENDPOINT);
  // TTL deletes an item only within days of its expiry: one past it is gone already.
  if (!delivery || isExpired(delivery.ttl, now)) throw notFound(NO_DELIVERY);
  const [entry] = await readTogether(db, [[db.entities.auditEntry, { teamId, entryId: delivery.entryId }]] as const);
  if (!entry || isExpired(entry.ttl, now)) throw notFound("That event is past the audit log's retention: it cannot be sent again.");
  await limitWebhookReplays(db, teamId, now);
  await webhookQueue().send([{ teamId, endpointId, entryId: delivery.entryId, replay: true }]);
  return { eventId: delivery.entryId };
};
