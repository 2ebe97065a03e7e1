import { randomBytes } from 'node:crypto';
import type { Claims } from '#lib/auth/session-items.ts';
import { actorStillHolds, requireMember } from '#lib/auth/team-access.ts';
import { canManageDomains, canReadDomains } from '#lib/auth/team-rules.ts';
import { config } from '#lib/core/config.ts';
import { AppError, notFound } from '#lib/core/errors.ts';
import { newId } from '#lib/core/ids.ts';
import { HOUR_MS, isoMillis } from '#lib/core/time.ts';
import type { TeamDomainItem } from '#lib/db/items.ts';
import type { Db } from '#lib/db/service.ts';
import { commit, named, write } from '#lib/db/transactions.ts';
import { auditActor, audited } from '#lib/events/audit.ts';
import type { DomainInput, DomainUpdateInput, DomainView } from '#lib/wire/domains.ts';
import { checkProof, recordName, recordValue } from './dns.ts';

/**
 * A team's domains (docs/domains.md): an owner claims one, publishes the TXT record it names, and
 * verifies it; one domain is verified for one team at most (its `domainOwner` item). A verified
 * domain lets people whose confirmed address is at it join the team (./join.ts), as its `join` says.
 */

/** Domains one team may claim: a company has a few. */
export const MAX_DOMAINS = 10;

export const domainView = (d: TeamDomainItem): DomainView => ({
  id: d.domainId,
  domain: d.domain,
  status: d.status,
  join: d.join,
  verification: { type: 'TXT', name: recordName(d.domain), value: recordValue(d.token) },
  verifiedAt: d.verifiedAt ?? null,
  checkedAt: d.checkedAt ?? null,
  problem: d.lastProblem ?? null,
  createdAt: d.createdAt,
  updatedAt: d.updatedAt,
});

/** The audit target of a domain: its public id (the entry's `changes` name the domain). */
export const domainTarget = (d: Pick<TeamDomainItem, 'domainId'>) => ({ type: 'domain', id: d.domainId }) as const;

/** When a verified domain is checked next. */
export const nextCheck = (now: Date): string => isoMillis(new Date(now.getTime() + config.domainRecheckHours * HOUR_MS));

const NO_DOMAIN = 'This team has not claimed that domain.';

/** The caller, an owner of the team (else 403), with the team; managers may read (`read`). */
const asManager = async (db: Db, claims: Claims, slug: string, read = false) => {
  const access = await requireMember(db, slug, claims);
  if (!(read ? canReadDomains : canManageDomains)(access.me.role)) throw new AppError('forbidden');
  return access;
};

const domainOf = async (db: Db, teamId: number, domain: string): Promise<TeamDomainItem> => {
  const found = (await db.entities.teamDomain.get({ teamId, domain }).go({ consistent: true })).data;
  if (!found) throw notFound(NO_DOMAIN);
  return found;
};

/** The team's domains, claimed and verified (at most MAX_DOMAINS: one Query, no pages). */
export const listDomains = async (db: Db, claims: Claims, slug: string): Promise<DomainView[]> => {
  const { team } = await asManager(db, claims, slug, true);
  const { data } = await db.entities.teamDomain.query.primary({ teamId: team.teamId }).go({ consistent: true, limit: MAX_DOMAINS });
  return data.map(domainView);
};

/**
 * Claims a domain for the team: PENDING, with the TXT record to publish. Any team may claim any
 * domain (a claim does nothing until proven); the team's count moves under MAX_DOMAINS in the
 * same transaction. Throws `forbidden`, `not_found`, `validation_failed` (the limit), `conflict`
 * (claimed already by this team: 409 with the domain named).
 */
export const addDomain = async (db: Db, claims: Claims, slug: string, input: DomainInput, now: Date): Promise<DomainView> => {
  const { team, me, actor } = await asManager(db, claims, slug);
  const stamp = isoMillis(now);
  const item: TeamDomainItem = {
    teamId: team.teamId,
    domain: input.domain,
    domainId: newId(now),
    status: 'PENDING',
    token: randomBytes(24).toString('base64url'),
    join: input.join ?? 'request',
    createdByUserId: me.userId,
    createdAt: stamp,
    updatedAt: stamp,
  };
  await commit(
    () =>
      write(db, (tx) => [
        named(
          'count',
          tx.team
            .patch({ teamId: team.teamId })
            .add({ domainCount: 1 })
            .where((a, op) => `(${op.notExists(a.domainCount)} OR ${op.lt(a.domainCount, MAX_DOMAINS)})`)
            .commit(),
        ),
        named('domain', tx.teamDomain.create(item).commit()),
        named('actorRole', actorStillHolds(tx, me)),
        named(
          'audit',
          audited(
            tx,
            {
              teamId: team.teamId,
              action: 'domain.added',
              actor: auditActor(actor, me.userId),
              target: domainTarget(item),
              changes: { domain: { after: item.domain }, join: { after: item.join } },
            },
            now,
          ),
        ),
      ]),
    {
      domain: () => new AppError('conflict', `This team has claimed ${input.domain} already.`),
      count: () =>
        new AppError('validation_failed', `A team may claim at most ${MAX_DOMAINS} domains: remove one first.`, {
          fields: { domain: `the team already has ${MAX_DOMAINS} domains` },
        }),
      actorRole: () => new AppError('conflict'),
      audit: () => new AppError('conflict'),
    },
  );
  return domainView(item);
};

/**
 * Looks up the TXT record now. Found: the domain is verified for this team, unless another team
 * verified it first (409 `domain_taken`); a verified domain checked again is simply refreshed. Not
 * found: the check is recorded (`problem`) and 422 `domain_not_verified` says what is missing.
 */
export const verifyDomain = async (db: Db, claims: Claims, slug: string, domain: string, now: Date): Promise<DomainView> => {
  const { team, me, actor } = await asManager(db, claims, slug);
  const found = await domainOf(db, team.teamId, domain);
  const proof = await checkProof(domain, found.token);
  const stamp = isoMillis(now);
  if (!proof.proven) {
    await db.entities.teamDomain
      .patch({ teamId: team.teamId, domain })
      .set({ checkedAt: stamp, lastProblem: proof.problem })
      .go()
      .catch(() => undefined);
    throw new AppError('domain_not_verified', `${domain} is not verified: ${proof.problem}.`);
  }
  // A domain verified again after a lapse is verified from now.
  const verifiedAt = found.status === 'VERIFIED' ? (found.verifiedAt ?? stamp) : stamp;
  await commit(
    () =>
      write(db, (tx) => [
        // One domain, one team: a second team's proof finds the first team's item.
        named(
          'owner',
          tx.domainOwner
            .upsert({ domain, teamId: team.teamId, verifiedAt, checkAfter: nextCheck(now) })
            .where((a, op) => `(${op.notExists(a.teamId)} OR ${op.eq(a.teamId, team.teamId)})`)
            .commit(),
        ),
        named(
          'domain',
          tx.teamDomain
            .patch({ teamId: team.teamId, domain })
            .set({ status: 'VERIFIED', verifiedAt, checkedAt: stamp, updatedAt: stamp })
            .remove(['lastProblem'])
            // As read: a lapse or a removal meanwhile is answered, not overwritten without its audit entry.
            .where((a, op) => op.eq(a.status, found.status))
            .commit(),
        ),
        named('actorRole', actorStillHolds(tx, me)),
        named(
          'audit',
          ...(found.status === 'VERIFIED'
            ? []
            : [
                audited(
                  tx,
                  {
                    teamId: team.teamId,
                    action: 'domain.verified',
                    actor: auditActor(actor, me.userId),
                    target: domainTarget(found),
                    changes: { domain: { before: domain, after: domain }, status: { before: found.status, after: 'VERIFIED' } },
                  },
                  now,
                ),
              ]),
        ),
      ]),
    {
      owner: () => new AppError('domain_taken'),
      domain: () => new AppError('conflict'),
      actorRole: () => new AppError('conflict'),
      audit: () => new AppError('conflict'),
    },
  );
  return domainView({ ...found, status: 'VERIFIED', verifiedAt, checkedAt: stamp, updatedAt: stamp, lastProblem: undefined });
};

/** Changes what the domain lets people at it do. Throws `forbidden`, `not_found`, `conflict`. */
export const updateDomain = async (
  db: Db,
  claims: Claims,
  slug: string,
  domain: string,
  input: DomainUpdateInput,
  now: Date,
): Promise<DomainView> => {
  const { team, me, actor } = await asManager(db, claims, slug);
  const found = await domainOf(db, team.teamId, domain);
  if (found.join === input.join) return domainView(found);
  const stamp = isoMillis(now);
  await commit(
    () =>
      write(db, (tx) => [
        named(
          'domain',
          tx.teamDomain
            .patch({ teamId: team.teamId, domain })
            .set({ join: input.join, updatedAt: stamp })
            .where((a, op) => op.eq(a.join, found.join))
            .commit(),
        ),
        named('actorRole', actorStillHolds(tx, me)),
        named(
          'audit',
          audited(
            tx,
            {
              teamId: team.teamId,
              action: 'domain.updated',
              actor: auditActor(actor, me.userId),
              target: domainTarget(found),
              changes: { domain: { before: domain, after: domain }, join: { before: found.join, after: input.join } },
            },
            now,
          ),
        ),
      ]),
    { domain: () => new AppError('conflict'), actorRole: () => new AppError('conflict'), audit: () => new AppError('conflict') },
  );
  return domainView({ ...found, join: input.join, updatedAt: stamp });
};

/**
 * Removes the claim, and the team's verification with it (the domain is free for another team).
 * Members who joined through it stay. Throws `forbidden`, `not_found`, `conflict`.
 */
export const removeDomain = async (db: Db, claims: Claims, slug: string, domain: string, now: Date): Promise<Record<string, never>> => {
  const { team, me, actor } = await asManager(db, claims, slug);
  const found = await domainOf(db, team.teamId, domain);
  await commit(
    () =>
      write(db, (tx) => [
        named(
          'domain',
          tx.teamDomain
            .delete({ teamId: team.teamId, domain })
            .where((a, op) => op.eq(a.status, found.status))
            .commit(),
        ),
        named(
          'owner',
          ...(found.status === 'VERIFIED'
            ? [
                tx.domainOwner
                  .delete({ domain })
                  .where((a, op) => op.eq(a.teamId, team.teamId))
                  .commit(),
              ]
            : []),
        ),
        named('count', tx.team.patch({ teamId: team.teamId }).add({ domainCount: -1 }).commit()),
        named('actorRole', actorStillHolds(tx, me)),
        named(
          'audit',
          audited(
            tx,
            {
              teamId: team.teamId,
              action: 'domain.removed',
              actor: auditActor(actor, me.userId),
              target: domainTarget(found),
              changes: { domain: { before: domain }, status: { before: found.status } },
            },
            now,
          ),
        ),
      ]),
    {
      domain: () => new AppError('conflict'),
      owner: () => new AppError('conflict'),
      count: () => notFound(NO_DOMAIN),
      actorRole: () => new AppError('conflict'),
      audit: () => new AppError('conflict'),
    },
  );
  return {};
};
