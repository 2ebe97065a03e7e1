/**
 * Team deletion off the request path: DELETE /api/teams/{slug} answers at once, and the stream-driven
 * cleanup (functions/team-cleanup.ts) removes a 20,000-member team's rows in time-boxed runs,
 * resumable after a run is cut short or crashes. The team's invites answer 404 at every stage.
 */
import type { DynamoDBRecord } from 'aws-lambda';
import { QueryCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bulkWriter } from '#bench/bulk-write.ts';
import { SYNTHETIC, inviteItems, membershipItem, storedUser, syntheticUuid } from '#bench/items.ts';
import type { LocalBackground } from '#infra/local-background.ts';
import { config } from '#lib/core/config.ts';
import { createDocumentClient } from '#lib/db/client.ts';
import { createDb, db } from '#lib/db/service.ts';
import { RESERVE_MS, runCleanupJobs } from '#lib/teams/cleanup.ts';
import { isoMillis } from '#lib/core/time.ts';
import { type Reply, type TestUser, addMember, createTeam, signUp, useApi } from '../helpers/api.ts';

const api = useApi();
const MEMBERS = 20_000;
const PENDING = 500;

type Item = Record<string, unknown>;
const documents = createDocumentClient();

/** Test-only Scan: every item that belongs to team `teamId` (by attribute or by partition). */
const rowsOf = async (teamId: number): Promise<Item[]> => {
  const pk = `$roster#teamid_${String(teamId).padStart(16, '0')}`;
  const rows: Item[] = [];
  let ExclusiveStartKey: Record<string, unknown> | undefined;
  do {
    const page = await documents.send(new ScanCommand({ TableName: config.tableName, ConsistentRead: true, ExclusiveStartKey }));
    // The audit log outlives the team for its retention (docs/audit.md): not the cleanup's to remove.
    rows.push(...((page.Items ?? []) as Item[]).filter((i) => (i.teamId === teamId || i.pk === pk) && i.__edb_e__ !== 'auditEntry'));
    ExclusiveStartKey = page.LastEvaluatedKey;
  } while (ExclusiveStartKey);
  return rows;
};

const countBy = (rows: Item[]): Record<string, number> =>
  rows.reduce<Record<string, number>>((n, r) => ({ ...n, [String(r.__edb_e__)]: (n[String(r.__edb_e__)] ?? 0) + 1 }), {});

/** The items left in the team's partition (memberships and claims), by strongly consistent Query pages. */
const leftInPartition = async (teamId: number): Promise<number> => {
  let count = 0;
  let ExclusiveStartKey: Record<string, unknown> | undefined;
  do {
    const page = await documents.send(
      new QueryCommand({
        TableName: config.tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': `$roster#teamid_${String(teamId).padStart(16, '0')}` },
        ConsistentRead: true,
        Select: 'COUNT',
        ExclusiveStartKey,
      }),
    );
    count += page.Count ?? 0;
    ExclusiveStartKey = page.LastEvaluatedKey;
  } while (ExclusiveStartKey);
  return count;
};

const job = async (teamId: number) => (await db().entities.teamCleanup.get({ teamId }).go({ consistent: true })).data;

/** The job's INSERT as the stream's event source hands it to the function. */
const insertRecord = (teamId: number): DynamoDBRecord => ({
  eventName: 'INSERT',
  dynamodb: { NewImage: { __edb_e__: { S: 'teamCleanup' }, teamId: { N: String(teamId) } }, SequenceNumber: '100' },
});

const outcome = (r: Reply): string => [r.status, r.body?.error?.code].filter((x) => x !== undefined).join(' ');

describe('team deletion with its cleanup on the stream', () => {
  let owner: TestUser;
  let invitee: TestUser;
  let other: TestUser;
  let background: LocalBackground | undefined;

  beforeAll(async () => {
    [owner, invitee, other] = await Promise.all([signUp(api, 'owner'), signUp(api, 'invitee'), signUp(api, 'other')]);
  });
  afterAll(async () => {
    await background?.stop();
    documents.destroy();
  });

  /** The invitee's invite answers 404 on preview, accept and decline. */
  const expectInviteGone = async (uuid: string, stage: string) => {
    const answers = await Promise.all([
      api.call('GET', `/api/invites/${uuid}`, { token: invitee.token }),
      api.call('POST', `/api/invites/${uuid}/accept`, { token: invitee.token }),
      api.call('POST', `/api/invites/${uuid}/decline`, { token: invitee.token }),
    ]);
    expect(answers.map(outcome), stage).toEqual(['404 not_found', '404 not_found', '404 not_found']);
  };

  it(
    'deletes a 20,000-member team at once, cleans up in the background (cut short, crashed, resumed) to 0 rows, and frees the slug',
    { timeout: 1_500_000 },
    async ({ annotate }) => {
      const team = await createTeam(api, owner);
      // Through the API: the invitee's pending invite, and an ended (declined) one with its outbox notice.
      const invited = await api.call('POST', `/api/teams/${team.slug}/invites`, {
        token: owner.token,
        json: { email: invitee.email, role: 'ADMIN' },
      });
      expect(invited.status).toBe(201);
      const uuid = (await api.call('GET', '/api/invites', { token: invitee.token })).body.data[0].uuid as string;
      await api.call('POST', `/api/teams/${team.slug}/invites`, { token: owner.token, json: { email: other.email, role: 'MEMBER' } });
      const declined = (await api.call('GET', '/api/invites', { token: other.token })).body.data[0].uuid as string;
      expect((await api.call('POST', `/api/invites/${declined}/decline`, { token: other.token })).status).toBe(200);

      // As items: 20,000 memberships and 500 pending invites (claim, id claim, invite), as the use cases write them.
      const seeded = Date.now();
      const writer = bulkWriter(process.env.DYNAMODB_ENDPOINT as string, config.tableName);
      const inviter = await storedUser(owner.uuid);
      const now = isoMillis(new Date());
      const members = Array.from({ length: MEMBERS }, (_, n) =>
        membershipItem({
          teamId: team.id,
          userUuid: syntheticUuid(n),
          memberId: SYNTHETIC.memberId + n,
          userId: SYNTHETIC.userId + n,
          role: 'MEMBER',
          createdAt: now,
          updatedAt: now,
        }),
      );
      const invites = Array.from(
        { length: PENDING },
        (_, n) => inviteItems(team.id, `pending-${n}@example.com`, inviter, new Date()).items,
      );
      await writer.write([...members, ...invites.flat()]);
      writer.close();
      const before = countBy(await rowsOf(team.id));
      expect(before).toMatchObject({ team: 1, membership: MEMBERS + 1, pendingInvite: PENDING + 1, invite: PENDING + 2 });
      const seedMs = Date.now() - seeded;

      // The request: the team and its slug go in one transaction with the job; it answers at once.
      const asked = Date.now();
      const deleted = await api.call('DELETE', `/api/teams/${team.slug}`, { token: owner.token });
      const deleteMs = Date.now() - asked;
      expect(outcome(deleted)).toBe('200');
      expect(await job(team.id)).toMatchObject({ teamId: team.id, slug: team.slug, deletedAt: expect.any(String) });
      expect(outcome(await api.call('GET', `/api/teams/${team.slug}`, { token: owner.token }))).toBe('404 not_found');

      // The slug is free at once; the new team is another team, which the old cleanup must not touch.
      const reused = await createTeam(api, other, team.slug);
      expect(reused.id).not.toBe(team.id);
      await addMember(api, reused.slug, other, owner, 'MEMBER');
      expect(
        (
          await api.call('POST', `/api/teams/${reused.slug}/invites`, {
            token: other.token,
            json: { email: invitee.email, role: 'MEMBER' },
          })
        ).status,
      ).toBe(201);
      const reusedRows = countBy(await rowsOf(reused.id));

      // Before the cleanup has started.
      await expectInviteGone(uuid, 'before the cleanup');

      // A run whose time runs out: it stops with work left and records its progress on the job.
      const deadline = Date.now() + RESERVE_MS + 1_000;
      const cut = await runCleanupJobs(db(), [{ messageId: 'cut', record: insertRecord(team.id) }], () => deadline - Date.now());
      expect(cut).toEqual([]);
      const afterCut = await job(team.id);
      expect(afterCut).toMatchObject({ runs: 1, deleted: expect.any(Number), updatedAt: expect.any(String) });
      const leftAfterCut = await leftInPartition(team.id);
      expect(leftAfterCut).toBeGreaterThan(0);
      expect(leftAfterCut).toBeLessThan(MEMBERS + PENDING + 2);

      // A run that crashes mid-way (its BatchWriteItems fail after three): reported to its queue for a retry.
      const failing = createDocumentClient();
      let writes = 0;
      failing.middlewareStack.add(
        (next, context) => (args) => {
          if (context.commandName === 'BatchWriteItemCommand' && ++writes > 3) throw new Error('simulated crash');
          return next(args);
        },
        { step: 'initialize', name: 'crashAfterThreeWrites' },
      );
      const crashed = await runCleanupJobs(
        createDb(failing, config.tableName),
        [{ messageId: 'crashed', record: insertRecord(team.id) }],
        () => 60_000,
      );
      failing.destroy();
      expect(crashed).toEqual([{ messageId: 'crashed', error: expect.any(Error) }]);
      expect((await job(team.id))?.runs).toBe(1);
      const leftHalfway = await leftInPartition(team.id);
      expect(leftHalfway).toBeGreaterThan(0);
      expect(leftHalfway).toBeLessThan(leftAfterCut);
      await expectInviteGone(uuid, 'half-way');

      // Now the stream's reader queues the job's records (its INSERT, then the cut run's MODIFY), and its queue runs them, as deployed.
      const invocations: number[] = [];
      const { handler } = await import('#functions/team-cleanup.ts');
      const { startLocalBackground } = await import('#infra/local-background.ts');
      const drainStart = Date.now();
      background = await startLocalBackground({
        // Only the cleanup works here: the invitations' mail and webhooks would add rows to the teams compared below.
        queues: {
          mail: { receive: false },
          fanout: { receive: false },
          cleanup: {
            handler: (event, context) => {
              invocations.push(event.Records.length);
              return handler(event, context);
            },
          },
        },
      });
      // Patient: DynamoDB Local on two shared cores reads its stream far slower than DynamoDB.
      for (let i = 0; i < 6000 && (await job(team.id)); i++) await sleep(100);
      const drainMs = Date.now() - drainStart;
      expect(await job(team.id)).toBeNull();

      expect(await rowsOf(team.id)).toEqual([]);
      const log = await db().entities.auditEntry.query.byTeam({ teamId: team.id }).go({ order: 'desc', limit: 1 });
      expect(log.data.map((e) => e.action)).toEqual(['team.deleted']);
      expect(countBy(await rowsOf(reused.id))).toEqual(reusedRows);
      expect(reusedRows).toEqual({ team: 1, slugClaim: 1, membership: 2, pendingInvite: 1, invite: 2 });
      await expectInviteGone(uuid, 'after the cleanup');
      const members2 = await api.call('GET', `/api/teams/${reused.slug}/members`, { token: other.token });
      expect(members2.body.data).toHaveLength(2);

      await annotate(
        `${MEMBERS} members + ${PENDING + 2} invites seeded in ${seedMs} ms; DELETE answered in ${deleteMs} ms; ` +
          `cut-short run left ${leftAfterCut} of the partition's ${MEMBERS + PENDING + 2} items (job progress: ${afterCut?.deleted} deleted), crashed run left ${leftHalfway}; ` +
          `the queue drained the rest in ${drainMs} ms over ${invocations.length} invocation(s) of ${invocations.join(', ')} record(s)`,
      );
    },
  );
});
