import type { BulkWriter } from './bulk-write.ts';
import { type SteadyState, seedSteadyState } from './scenarios.ts';

/** What a part gets from its worker process (bench/worker.ts), whose table it has to itself. */
export interface PartContext {
  /** Loads items into the worker's table. */
  writer: BulkWriter;
  progress: (text: string) => void;
  /** The steady state with a large team of `bigSize`, seeded on first use and shared by the parts of this process. */
  steadyState: (bigSize: number) => Promise<SteadyState>;
}

export const steadyStateOnce = (writer: BulkWriter): PartContext['steadyState'] => {
  let seeded: { bigSize: number; state: Promise<SteadyState> } | undefined;
  return (bigSize) => {
    seeded ??= { bigSize, state: seedSteadyState(writer, bigSize) };
    if (seeded.bigSize !== bigSize) throw new Error(`steady state seeded with ${seeded.bigSize} members, asked for ${bigSize}`);
    return seeded.state;
  };
};
