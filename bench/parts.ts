import type { CapacityResult } from './capacity.ts';
import type { ColdResult } from './cold-start.ts';
import type { LoadResult } from './load.ts';
import type { ScaleResult } from './scale.ts';

/** The parts of the benchmark, in the order they run; `npm run bench -- <part>...` picks some. */
export const PART_NAMES = ['cold', 'capacity', 'load', 'scale'] as const;
export type PartName = (typeof PART_NAMES)[number];

/**
 * Parts that run in one process share its table: capacity and warm load measure the same steady
 * state (seeded once). Cold start and scale each need a table of their own.
 */
export const PROCESS_GROUPS: readonly (readonly PartName[])[] = [['cold'], ['capacity', 'load'], ['scale']];

export interface Results {
  cold?: ColdResult;
  capacity?: CapacityResult;
  load?: LoadResult;
  scale?: ScaleResult;
}

/** What a worker process sends to run.ts. */
export type WorkerMessage = { progress: string } | { part: PartName; result: unknown };
