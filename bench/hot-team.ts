/**
 * Hot team: how many joins a second one team takes. CONCURRENCY clients accept distinct pending
 * invites to the same team through the local server, each sending its next accept when the last
 * is answered; every answer other than 200 is counted as an error, by status and code.
 *
 * `runHotTeam(ctx)` is the part (it runs in a bench worker, whose table it shares). Alone:
 * `npx node bench/hot-team.ts [accepts] [concurrency]` starts an in-memory DynamoDB Local and a table of its own
 * and prints the result as JSON; it needs only what the code at c08d25c already had, so the same
 * file measures the code before the join path lost its hot item (copy it into a worktree there).
 * Modules that read the environment are imported inside the function, after it is set.
 */
import type { UserItem } from '#lib/db/items.ts';
import type { BulkWriter } from './bulk-write.ts';

export const CONCURRENCY = 50;
/** Accepts per run: enough for some seconds of load at a few hundred joins a second. */
export const ACCEPTS = 1500;

export interface HotTeamResult {
  concurrency: number;
  accepts: number;
  seconds: number;
  /** Accepts answered 200 a second, over the run. */
  joinsPerSecond: number;
  /** Answers by "status code" (0: no answer), successes included. */
  answers: Record<string, number>;
  /** Memberships of the team afterwards (the owner's included): joins that really happened. */
  members: number;
}

export const runHotTeam = async (
  ctx: { writer: BulkWriter; progress: (text: string) => void },
  { accepts = ACCEPTS, concurrency = CONCURRENCY } = {},
): Promise<HotTeamResult> => {
  const { createTeam, inParallel, mintSessions, signUp } = await import('./seed.ts');
  const { SYNTHETIC, inviteItems, storedUser, syntheticUuid } = await import('./items.ts');
  const { db } = await import('#lib/db/service.ts');
  const { startLocalServer } = await import('#lib/http/server.ts');
  const { isoMillis } = await import('#lib/core/time.ts');

  ctx.progress(`hot team: seeding ${accepts} invitees`);
  const owner = await signUp('hot-owner');
  const team = await createTeam(owner, 'hot');
  const inviter = await storedUser(owner.uuid);
  const now = new Date();
  const stamp = isoMillis(now);
  // Invitees as items (no password hash each), numbered above any other synthetic user of the process.
  const base = 900_000 + Math.floor(Math.random() * 1_000) * 1_000;
  const invitees: UserItem[] = Array.from({ length: accepts }, (_, i) => ({
    userUuid: syntheticUuid(base + i),
    userId: SYNTHETIC.userId + base + i,
    email: `hot-${base + i}@example.com`,
    firstName: 'Hot',
    lastName: `Joiner${i}`,
    passwordHash: 'synthetic: never signs in',
    // Confirmed, as invitees who followed their confirmation link: accepting needs it.
    emailConfirmedAt: stamp,
    createdAt: stamp,
    updatedAt: stamp,
  }));
  const invites = invitees.map((u) => inviteItems(team.id, u.email, inviter, now));
  await ctx.writer.write([
    ...invitees.map((u) => (db().entities.user.put(u).params() as { Item: Record<string, unknown> }).Item),
    ...invites.flatMap((i) => i.items),
  ]);
  const tokens = await inParallel(accepts, 8, async (i) => {
    const u = invitees[i] as UserItem;
    const [session] = await mintSessions({ email: u.email, uuid: u.userUuid, token: '', refreshToken: '' }, 1);
    return session?.token as string;
  });

  const server = await startLocalServer(0);
  const { httpClient } = await import('./invoke.ts');
  const client = httpClient(server.url, concurrency);
  const answers: Record<string, number> = {};
  let next = 0;
  ctx.progress(`hot team: ${accepts} accepts into one team, ${concurrency} at a time`);
  const started = performance.now();
  const worker = async () => {
    for (let i = next++; i < accepts; i = next++) {
      const status = await client
        .send({ method: 'POST', path: `/api/invites/${invites[i]?.inviteUuid}/accept`, token: tokens[i] as string })
        .catch(() => 0);
      answers[status] = (answers[status] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = (performance.now() - started) / 1000;
  client.close();
  await server.close();

  const members = (
    await db()
      .entities.membership.query.primary({ teamId: team.id })
      .go({ consistent: true, pages: 'all', attributes: ['userUuid'] })
  ).data.length;
  return { concurrency, accepts, seconds, joinsPerSecond: (answers[200] ?? 0) / seconds, answers, members };
};

/** Alone: DynamoDB Local in memory, a table without its stream (nothing here reads it), then the part. */
if (import.meta.url === `file://${process.argv[1]}`) {
  const { mkdtempSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { CreateTableCommand } = await import('@aws-sdk/client-dynamodb');
  const { localClient, startDynamoDbLocal } = await import('#infra/dynamodb-local.ts');
  const { createTableInput } = await import('#lib/db/entities/table.ts');
  const { bulkWriter } = await import('./bulk-write.ts');
  const dynamo = await startDynamoDbLocal();
  try {
    Object.assign(process.env, {
      DYNAMODB_ENDPOINT: dynamo.endpoint,
      TABLE_NAME: 'hot-team',
      DATA_DIR: mkdtempSync(join(tmpdir(), 'roster-hot-team-')),
      MAIL_TRANSPORT: 'log',
      RATE_LIMIT_IP_BURST: '1000000',
      RATE_LIMIT_IP_REFILL: '1000000',
    });
    const admin = localClient(dynamo.endpoint);
    await admin.send(new CreateTableCommand({ ...createTableInput('hot-team'), StreamSpecification: undefined }));
    admin.destroy();
    const writer = bulkWriter(dynamo.endpoint, 'hot-team');
    const accepts = Number(process.argv[2]) || ACCEPTS;
    const concurrency = Number(process.argv[3]) || CONCURRENCY;
    const result = await runHotTeam({ writer, progress: (text) => console.error(text) }, { accepts, concurrency });
    writer.close();
    console.log(JSON.stringify(result));
  } finally {
    dynamo.stop();
  }
  process.exit(0);
}
