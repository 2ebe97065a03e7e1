import { log } from '#lib/core/log.ts';
import { stepWhile } from '#lib/core/time-budget.ts';
import { isoMillis } from '#lib/core/time.ts';
import type { Db } from '#lib/db/service.ts';
import { isConditionFailure } from '#lib/db/transactions.ts';
import { CLEANUP_SWEEP } from '#lib/http/background.ts';
import { cleanupDueAt } from '#lib/teams/cleanup.ts';

/**
 * The sweep of team-cleanup jobs whose run was lost (docs/data-model.md, "Team deletion"): a job
 * whose stream record or queue message never became a run (the stream reader or the work queue gave
 * up on it, or `npm start` stopped with it queued) would wait forever. Each job is due
 * TEAM_CLEANUP.staleAfterSeconds after its creation or its last run (gsi3, `dueAt`); the sweep
 * touches every job due, and the touch's MODIFY record starts a run through the stream reader and
 * the work queue like any other. A job whose run is merely slow is touched too: runs are idempotent.
 */

/** A run starts no new page with less time than this left (CLEANUP_SWEEP.reserveSeconds). */
export const RESERVE_MS = CLEANUP_SWEEP.reserveSeconds * 1000;

/** Jobs read per page. */
const PAGE = 100;

export interface CleanupSweep {
  /** Jobs touched. */
  started: number;
  /** Jobs gone or touched by someone else between the read and the touch. */
  skipped: number;
}

export const sweepCleanupJobs = async (db: Db, now: Date, mayGoOn: () => boolean): Promise<CleanupSweep> => {
  const { teamCleanup } = db.entities;
  const result: CleanupSweep = { started: 0, skipped: 0 };
  await stepWhile(async () => {
    const { data } = await teamCleanup.query
      .byDue({})
      // Bounded below: gsi3's partition also lists the webhook teams (lib/db/entities/webhooks.ts); today
      // their keys sort after the jobs', and the bound keeps it so whatever the names.
      .between({ dueAt: '' }, { dueAt: isoMillis(now) })
      .go({ limit: PAGE, attributes: ['teamId', 'dueAt'] });
    for (const job of data) {
      try {
        await teamCleanup
          .patch({ teamId: job.teamId })
          .set({ dueAt: cleanupDueAt(now), updatedAt: isoMillis(now) })
          .where((a, op) => op.eq(a.dueAt, job.dueAt ?? ''))
          .go();
        result.started++;
        log.info('team cleanup started again by the sweep', { teamId: job.teamId, dueAt: job.dueAt });
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
        result.skipped++;
      }
    }
    // A full page may have more behind it; each touched job left the range, so the next page is new.
    return data.length === PAGE;
  }, mayGoOn);
  return result;
};
