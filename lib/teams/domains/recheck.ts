import { log } from '#lib/core/log.ts';
import { stepWhile } from '#lib/core/time-budget.ts';
import { HOUR_MS, isoMillis } from '#lib/core/time.ts';
import type { DomainOwnerItem } from '#lib/db/items.ts';
import type { Db } from '#lib/db/service.ts';
import { commit, isConditionFailure, named, write } from '#lib/db/transactions.ts';
import { ROSTER_ITSELF, audited } from '#lib/events/audit.ts';
import { DOMAIN_RECHECK } from '#lib/http/background.ts';
import { checkProof } from './dns.ts';
import { domainTarget, nextCheck } from './domains.ts';

/**
 * The scheduled re-check of verified domains (docs/domains.md, "Re-checks"). A domain whose TXT
 * record is gone or changed **lapses**: its `domainOwner` item goes (no more joins, and another
 * team may prove it), its record says LAPSED and why, an audit entry (and webhook event) records
 * it. Nobody is removed. A lookup that fails (a timeout, SERVFAIL) lapses nothing: it is asked
 * again in an hour. Two runs at once only repeat conditional writes.
 */

export const RESERVE_MS = DOMAIN_RECHECK.reserveSeconds * 1000;
const PAGE = 25;

export interface Recheck {
  confirmed: number;
  lapsed: number;
  /** Lookups that failed, asked again later; and domains that changed under the run (removed, checked meanwhile). */
  deferred: number;
}

const moveCheck = (db: Db, owner: DomainOwnerItem, checkAfter: string) =>
  db.entities.domainOwner
    .patch({ domain: owner.domain })
    .set({ checkAfter })
    .where((a, op) => `${op.eq(a.teamId, owner.teamId)} AND ${op.eq(a.checkAfter, owner.checkAfter)}`)
    .go();

const recheckOne = async (db: Db, owner: DomainOwnerItem, now: Date, result: Recheck): Promise<void> => {
  const record = (await db.entities.teamDomain.get({ teamId: owner.teamId, domain: owner.domain }).go({ consistent: true })).data;
  if (record?.status !== 'VERIFIED') {
    // An owner item whose claim is gone or not verified (only a fault leaves one): it would stay due
    // and keep the domain from every other team. It goes, as read.
    await db.entities.domainOwner
      .delete({ domain: owner.domain })
      .where((a, op) => `${op.eq(a.teamId, owner.teamId)} AND ${op.eq(a.checkAfter, owner.checkAfter)}`)
      .go();
    result.deferred++;
    return;
  }
  const proof = await checkProof(owner.domain, record.token);
  const stamp = isoMillis(now);
  if (proof.proven) {
    await moveCheck(db, owner, nextCheck(now));
    await db.entities.teamDomain
      .patch({ teamId: owner.teamId, domain: owner.domain })
      .set({ checkedAt: stamp })
      .remove(['lastProblem'])
      .go();
    result.confirmed++;
    return;
  }
  if (proof.transient) {
    await moveCheck(db, owner, isoMillis(new Date(now.getTime() + HOUR_MS)));
    result.deferred++;
    log.info('domain re-check deferred', { domain: owner.domain, teamId: owner.teamId, problem: proof.problem });
    return;
  }
  let lapsed = true;
  await commit(
    () =>
      write(db, (tx) => [
        named(
          'owner',
          tx.domainOwner
            .delete({ domain: owner.domain })
            .where((a, op) => `${op.eq(a.teamId, owner.teamId)} AND ${op.eq(a.checkAfter, owner.checkAfter)}`)
            .commit(),
        ),
        named(
          'domain',
          tx.teamDomain
            .patch({ teamId: owner.teamId, domain: owner.domain })
            .set({ status: 'LAPSED', checkedAt: stamp, lastProblem: proof.problem, updatedAt: stamp })
            .where((a, op) => op.eq(a.status, 'VERIFIED'))
            .commit(),
        ),
        named(
          'audit',
          audited(
            tx,
            {
              teamId: owner.teamId,
              action: 'domain.lapsed',
              actor: ROSTER_ITSELF,
              target: domainTarget(record),
              changes: { domain: { before: owner.domain, after: owner.domain }, status: { before: 'VERIFIED', after: 'LAPSED' } },
            },
            now,
          ),
        ),
      ]),
    // Removed or checked by someone else meanwhile: theirs stands.
    {
      otherwise: () => {
        lapsed = false;
        return 'done';
      },
    },
  );
  if (!lapsed) {
    result.deferred++;
    return;
  }
  result.lapsed++;
  log.info('domain lapsed', { domain: owner.domain, teamId: owner.teamId, problem: proof.problem });
};

export const recheckDomains = async (db: Db, now: Date, mayGoOn: () => boolean): Promise<Recheck> => {
  const result: Recheck = { confirmed: 0, lapsed: 0, deferred: 0 };
  await stepWhile(async () => {
    // Bounded below, as every gsi3 query of an entity's keys: the partition is shared (lib/teams/cleanup-sweep.ts).
    const { data } = await db.entities.domainOwner.query
      .byCheck({})
      .between({ checkAfter: '' }, { checkAfter: isoMillis(now) })
      .go({ limit: PAGE });
    for (const owner of data) {
      if (!mayGoOn()) return false;
      try {
        await recheckOne(db, owner, now, result);
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
        result.deferred++;
      }
    }
    // Each domain handled left the range (its next check moved, or it lapsed).
    return data.length === PAGE;
  }, mayGoOn);
  return result;
};
