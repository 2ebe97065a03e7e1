import type { CapacityResult } from './capacity.ts';
import type { ColdResult } from './cold-start.ts';
import type { HotTeamResult } from './hot-team.ts';
import type { LoadResult } from './load.ts';
import type { NatResult } from './nat.ts';
import type { ScaleResult } from './scale.ts';

/** The parts of the benchmark, in the order they run; `npm run bench -- <part>...` picks some. */
export const PART_NAMES = ['cold', 'capacity', 'load', 'scale', 'hotteam', 'nat'] as const;
export type PartName = (typeof PART_NAMES)[number];

/**
 * Parts that run in one process share its table: capacity and warm load measure the same steady
 * state (seeded once). Cold start, scale, the hot team and the NAT each need a table of their own;
 * the NAT part also runs with the default limits (its point is what they let through).
 */
export const PROCESS_GROUPS: readonly (readonly PartName[])[] = [['cold'], ['capacity', 'load'], ['scale'], ['hotteam'], ['nat']];

/** Parts whose process keeps the configured rate limits instead of the benchmark's raised ones. */
export const WITH_LIMITS: readonly PartName[] = ['nat'];

export interface Results {
  cold?: ColdResult;
  capacity?: CapacityResult;
  load?: LoadResult;
  scale?: ScaleResult;
  hotteam?: HotTeamResult;
  nat?: NatResult;
}

/** What a worker process sends to run.ts. */
export type WorkerMessage = { progress: string } | { part: PartName; result: unknown };
