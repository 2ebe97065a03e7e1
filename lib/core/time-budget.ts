/**
 * The time a background invocation may spend (Lambda's getRemainingTimeInMillis): a run starts a
 * new step only while more than `reserveMs` is left, so it ends cleanly before its timeout and the
 * next run goes on; what is under way when it stops must return by `deadline`.
 */
export interface TimeBudget {
  /** Whether another step may start. */
  readonly mayGoOn: () => boolean;
  /** Epoch milliseconds by which work under way should return: the invocation's end, less a margin. */
  readonly deadline: number;
}

/** Kept back from the invocation's end by `deadline`, so a step returns before Lambda cuts it off. */
const MARGIN_MS = 1000;

export const timeBudget = (remainingMs: () => number, reserveMs = 0): TimeBudget => ({
  mayGoOn: () => remainingMs() > reserveMs,
  deadline: Date.now() + remainingMs() - MARGIN_MS,
});

/**
 * Runs `step` until it reports nothing left (false) or `mayGoOn()` refuses another; the first step
 * always runs, so every run makes progress. `worked`: the steps that found work (returned true).
 */
export const stepWhile = async (step: () => Promise<boolean>, mayGoOn: () => boolean): Promise<{ finished: boolean; worked: number }> => {
  let worked = 0;
  while (await step()) {
    worked++;
    if (!mayGoOn()) return { finished: false, worked };
  }
  return { finished: true, worked };
};
