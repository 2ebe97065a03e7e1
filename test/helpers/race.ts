import type { Api } from './api.ts';

/**
 * Builds every request first, then lets them all go at once by opening one shared gate. Request i
 * may first make `hops[i]` round trips to /healthz (no handler, no database): a sleep-free way to
 * shift one side of a race by a fraction of a millisecond, so the rounds sweep the interleavings
 * instead of replaying the one that the code paths' lengths favour.
 */
export const race = async <T>(api: Pick<Api, 'url'>, requests: (() => Promise<T>)[], hops: readonly number[] = []): Promise<T[]> => {
  let open: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const inFlight = requests.map(async (send, i) => {
    await gate;
    for (let hop = 0; hop < (hops[i] ?? 0); hop++) await fetch(`${api.url}/healthz`).then((r) => r.arrayBuffer());
    return send();
  });
  open();
  return Promise.all(inFlight);
};

/** Hops for a two-sided race in round `round`: even rounds hold back the first side, odd rounds the second, `step` more each pair. */
export const sweep = (round: number, step = 1): [number, number] => {
  const hops = Math.floor(round / 2) * step;
  return round % 2 === 0 ? [hops, 0] : [0, hops];
};
