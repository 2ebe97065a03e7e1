/**
 * The sweep of team-cleanup jobs whose run was lost (lib/teams/cleanup-sweep.ts): a job is due
 * TEAM_CLEANUP.staleAfterSeconds after its creation or last run; the sweep touches each job due, and
 * the touch's stream record starts a run through the stream's reader and the cleanup queue, as
 * deployed (infra/local-background.ts). Here the reader loses every cleanup job's INSERT, as a
 * stream or a queue that gave up would, and only the sweep gets the team cleaned up.
 */
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalBackground } from '#infra/local-background.ts';
import { isoMillis } from '#lib/core/time.ts';
import { db } from '#lib/db/service.ts';
import { dispatch } from '#lib/events/stream-dispatch.ts';
import { TEAM_CLEANUP } from '#lib/http/background.ts';
import { sweepCleanupJobs } from '#lib/teams/cleanup-sweep.ts';
import { createTeam, signUp, useApi } from '../helpers/api.ts';
import { until } from '../helpers/until.ts';

const api = useApi();
let background: LocalBackground;
/** The INSERTs of cleanup jobs the reader was handed and dropped. */
const lost: number[] = [];

beforeAll(async () => {
  const { startLocalBackground } = await import('#infra/local-background.ts');
  background = await startLocalBackground({
    pollMs: 50,
    handler: (event: DynamoDBStreamEvent) => {
      const kept = event.Records.filter((r) => {
        const isJobInsert = r.eventName === 'INSERT' && r.dynamodb?.NewImage?.__edb_e__?.S === 'teamCleanup';
        if (isJobInsert) lost.push(Number(r.dynamodb?.NewImage?.teamId?.N));
        return !isJobInsert;
      });
      return dispatch(kept);
    },
  });
});
afterAll(() => background.stop());

const job = async (teamId: number) => (await db().entities.teamCleanup.get({ teamId }).go({ consistent: true })).data;

const deletedTeam = async (): Promise<number> => {
  const owner = await signUp(api, 'sweep');
  const team = await createTeam(api, owner);
  expect((await api.call('DELETE', `/api/teams/${team.slug}`, { token: owner.token })).status).toBe(200);
  return team.id;
};

describe('cleanup sweep', () => {
  it('leaves a job alone until it is due, then starts it again: the lost job runs to its end', { timeout: 90_000 }, async () => {
    const teamId = await deletedTeam();
    await until('the job INSERT reached the reader', async () => lost.includes(teamId));
    const written = await job(teamId);
    expect(written?.dueAt).toBe(isoMillis(new Date(Date.parse(written?.deletedAt ?? '') + TEAM_CLEANUP.staleAfterSeconds * 1000)));

    // Not due yet: untouched.
    const early = await sweepCleanupJobs(db(), new Date(), () => true);
    expect(early.started).toBe(0);
    expect((await job(teamId))?.updatedAt).toBeUndefined();

    // Due: touched, and the touch (a MODIFY) starts the run that deletes the team's rows and the job.
    const later = new Date(Date.now() + (TEAM_CLEANUP.staleAfterSeconds + 1) * 1000);
    const swept = await sweepCleanupJobs(db(), later, () => true);
    expect(swept.started).toBeGreaterThanOrEqual(1);
    await until('the job is done', async () => (await job(teamId)) === null);
    const members = await db().entities.membership.query.primary({ teamId }).go({ consistent: true });
    expect(members.data).toEqual([]);
  });
});
