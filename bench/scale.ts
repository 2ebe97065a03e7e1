import type { MembershipItem } from '#lib/db/items.ts';
import type { PartContext } from './context.ts';
import { type ApiRequest, invokeDirect } from './invoke.ts';
import { meterHandlers, recordCalls } from './meter.ts';
import { SYNTHETIC, addSyntheticMembers, checkMembershipItem, membershipItem, syntheticUuid } from './items.ts';
import { createTeam, inParallel, signUp } from './seed.ts';
import { type Summary, summarize } from './stats.ts';

/** Memberships in the table at each measurement. */
const LEVELS = [1_000, 100_000, 1_000_000] as const;
const CALLS = 200;
const WARMUP = 50;
/**
 * Before the first level, the endpoints run this long unmeasured: a fresh DynamoDB Local's JIT
 * would otherwise make the smallest table look the slowest.
 */
const FIRST_WARMUP_MS = 5000;
/** The measured user's teams and the measured team's members: fixed, realistic sizes. */
const MY_TEAMS = 5;
const TEAM_SIZE = 50;
/** Filler: teams of 20, drawn from 200,000 users (each in 5 teams once a million are loaded). */
const FILLER_TEAM = 20;
const FILLER_USERS = 200_000;
/** Synthetic numbers above the measured team's members. */
const FILLER_OFFSET = 1_000_000;

export interface ScaleRow {
  label: string;
  level: number;
  /** DynamoDB requests of each call: one value when every call made the same. */
  requests: number[];
  rcu: number[];
  wcu: number[];
  handlerMs: Summary;
}

export interface ScaleLoad {
  level: number;
  items: number;
  seconds: number;
  perSecond: number;
}

export interface ScaleResult {
  calls: number;
  myTeams: number;
  teamSize: number;
  loads: ScaleLoad[];
  rows: ScaleRow[];
}

/** Filler memberships number `from` to `to - 1`, spread over many teams and users. */
function* filler(from: number, to: number): Generator<Record<string, unknown>> {
  const stamp = new Date().toISOString();
  for (let k = from; k < to; k++) {
    const n = FILLER_OFFSET + (k % FILLER_USERS);
    const m: MembershipItem = {
      teamId: SYNTHETIC.teamId + Math.floor(k / FILLER_TEAM),
      userUuid: syntheticUuid(n),
      memberId: SYNTHETIC.memberId + FILLER_OFFSET + k,
      userId: SYNTHETIC.userId + n,
      role: 'MEMBER',
      createdAt: stamp,
      updatedAt: stamp,
    };
    if (k === from) checkMembershipItem(m);
    yield membershipItem(m);
  }
}

const distinct = (values: number[]): number[] => [...new Set(values)].sort((a, b) => a - b);

const measure = async (label: string, level: number, req: ApiRequest): Promise<ScaleRow> => {
  const wall: number[] = [];
  const requests: number[] = [];
  const rcu: number[] = [];
  const wcu: number[] = [];
  for (let i = 0; i < WARMUP + CALLS; i++) {
    const { value, calls } = await recordCalls(() => invokeDirect(req), { capacity: true });
    if (value.status !== 200) throw new Error(`${label}: ${value.status} ${JSON.stringify(value.body)}`);
    if (i < WARMUP) continue;
    wall.push(value.handlerMs);
    requests.push(calls.length);
    rcu.push(calls.reduce((sum, c) => sum + c.rcu, 0));
    wcu.push(calls.reduce((sum, c) => sum + c.wcu, 0));
  }
  return { label, level, requests: distinct(requests), rcu: distinct(rcu), wcu: distinct(wcu), handlerMs: summarize(wall) };
};

export const runScale = async (ctx: PartContext): Promise<ScaleResult> => {
  meterHandlers();
  ctx.progress(`scale: a user in ${MY_TEAMS} teams, a team of ${TEAM_SIZE}`);
  const me = await signUp('me');
  const teams = await inParallel(MY_TEAMS, 1, () => createTeam(me, 'mine'));
  const measured = teams[0];
  if (!measured) throw new Error('scale: no team');
  await addSyntheticMembers(ctx.writer, measured.id, 0, TEAM_SIZE - 1);
  const own = MY_TEAMS + TEAM_SIZE - 1;

  const endpoints: [string, ApiRequest][] = [
    [`GET /api/teams (${MY_TEAMS} teams)`, { method: 'GET', path: '/api/teams', token: me.token }],
    ['GET /api/teams/{slug}', { method: 'GET', path: `/api/teams/${measured.slug}`, token: me.token }],
    [
      `GET /api/teams/{slug}/members (${TEAM_SIZE}, first page)`,
      { method: 'GET', path: `/api/teams/${measured.slug}/members`, token: me.token },
    ],
  ];
  const loads: ScaleLoad[] = [];
  const rows: ScaleRow[] = [];
  let loaded = own;
  for (const level of LEVELS) {
    ctx.progress(`scale: loading memberships up to ${level.toLocaleString('en-US')}`);
    const started = performance.now();
    const items = await ctx.writer.write(filler(loaded - own, level - own));
    const seconds = (performance.now() - started) / 1000;
    loads.push({ level, items, seconds, perSecond: items / seconds });
    if (loaded === own) {
      const until = performance.now() + FIRST_WARMUP_MS;
      while (performance.now() < until) for (const [, req] of endpoints) await invokeDirect(req);
    }
    loaded = level;
    for (const [label, req] of endpoints) rows.push(await measure(label, level, req));
  }
  return { calls: CALLS, myTeams: MY_TEAMS, teamSize: TEAM_SIZE, loads, rows };
};
