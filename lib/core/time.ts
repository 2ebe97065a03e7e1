/** Wire timestamps: UTC, always three fraction digits, `Z` (CONTRACT.md). */
export const isoMillis = (date: Date): string => date.toISOString();

/** `last_sign_in_at` carries microseconds: the millisecond clock plus sub-millisecond digits. */
export const isoMicros = (date: Date, extraMicros: number): string =>
  `${date.toISOString().slice(0, -1)}${String(extraMicros % 1000).padStart(3, '0')}Z`;

/** The epoch second `at` falls in (rounded down): for comparing with a stored expiry at `at`. */
export const epochSeconds = (at: Date | number): number => Math.floor(Number(at) / 1000);

/** An expiry in epoch seconds, rounded up: a DynamoDB TTL that must not fire before `at`. */
export const expirySeconds = (at: Date | number): number => Math.ceil(Number(at) / 1000);

/** Whether a DynamoDB TTL (epoch seconds) has passed at `now`: TTL deletes an expired item only within days, so readers check. */
export const isExpired = (ttl: number, now: Date | number): boolean => ttl <= epochSeconds(now);

export const HOUR_MS = 3_600_000;

export const addDays = (date: Date, days: number): Date => new Date(date.getTime() + days * 86_400_000);

/** `last_sign_in_at` carries microseconds; the sub-millisecond digits come from the monotonic clock. */
export const signInStamp = (now: Date): string => isoMicros(now, Math.floor(performance.now() * 1000));
