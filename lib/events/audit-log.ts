import type { Claims } from '#lib/auth/session-items.ts';
import { pageThenMember } from '#lib/auth/team-access.ts';
import { canReadAudit } from '#lib/auth/team-rules.ts';
import { AppError } from '#lib/core/errors.ts';
import { Page, type PageRequest } from '#lib/core/pagination.ts';
import type { AuditAction } from '#lib/db/entities/audit-actions.ts';
import type { auditEntry } from '#lib/db/entities/audit.ts';
import { cursorAfter, queryPage } from '#lib/db/pages.ts';
import type { Db } from '#lib/db/service.ts';
import type { AuditEntry } from '#lib/wire/responses.ts';
import type { Changes } from './audit.ts';

type StoredEntry = Awaited<ReturnType<ReturnType<ReturnType<typeof auditEntry>['query']['byTeam']>['go']>>['data'][number];

/** An entry as the log and the webhook messages show it. */
export const entryView = (e: StoredEntry): AuditEntry => ({
  id: e.entryId,
  createdAt: e.createdAt,
  action: e.action,
  // 0: someone without an account, through a mailed link (NO_ACCOUNT in ./audit.ts).
  actor: { userId: e.actorUserId > 0 ? e.actorUserId : null, email: e.actorEmail },
  target: {
    type: e.targetType,
    id: e.targetId,
    ...(e.targetEmail === undefined ? {} : { email: e.targetEmail }),
    ...(e.targetUserId === undefined ? {} : { userId: e.targetUserId }),
  },
  changes: JSON.parse(e.changes) as Changes,
  requestId: e.requestId ?? null,
  sourceIp: e.sourceIp ?? null,
});

/**
 * A page of the team's audit log, newest first, optionally of one action: one Query of the team's
 * log partition (or of gsi1 by team and action) read between the slug and the membership, as the
 * other team lists. OWNER and ADMIN only (403); non-members 404 as everywhere.
 */
export const listAudit = async (
  db: Db,
  claims: Claims,
  slug: string,
  request: PageRequest & { action?: AuditAction | undefined },
): Promise<Page<AuditEntry>> => {
  const entity = db.entities.auditEntry;
  const { action } = request;
  const { page, me } = await pageThenMember(
    db,
    slug,
    claims,
    (teamId) =>
      queryPage(
        db,
        `audit ${teamId} ${action ?? '*'}`,
        (options) =>
          (action === undefined ? entity.query.byTeam({ teamId }) : entity.query.byAction({ teamId, action })).go({
            ...options,
            order: 'desc',
          }),
        request,
        cursorAfter(entity, action === undefined ? 'byTeam' : 'byAction'),
      ),
    () => [] as const,
  );
  if (!canReadAudit(me.role)) throw new AppError('forbidden');
  return new Page(page.items.map(entryView), page.cursor);
};
