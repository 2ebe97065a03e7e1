import { config } from '#lib/core/config.ts';
import { serviceUnavailable } from '#lib/core/errors.ts';
import { log } from '#lib/core/log.ts';
import { CACHE_MAX_AGE_MS } from './model.ts';

// Per-process caches of the keys, and how their failure is answered.

/** Every cache of this process, so forgetCachedKeys reaches the signing key's too (signing.ts). */
const caches = new Set<{ forget: () => void }>();

/** One value per process, reloaded when older than the age asked for; a failed load is not kept. */
export class KeyCache<T> {
  private entry: { value: Promise<T>; at: number } | undefined;
  private readonly load: () => Promise<T>;
  private readonly clock: () => number;

  constructor(load: () => Promise<T>, clock: () => number = Date.now) {
    this.load = load;
    this.clock = clock;
    caches.add(this);
  }

  get(maxAgeMs = CACHE_MAX_AGE_MS): Promise<T> {
    const now = this.clock();
    if (!this.entry || now - this.entry.at >= maxAgeMs) {
      const entry = { value: this.load(), at: now };
      entry.value.catch(() => {
        if (this.entry === entry) this.entry = undefined;
      });
      this.entry = entry;
    }
    return this.entry.value;
  }

  /** Whether get() would answer without loading. */
  holds(maxAgeMs = CACHE_MAX_AGE_MS): boolean {
    return this.entry !== undefined && this.clock() - this.entry.at < maxAgeMs;
  }

  /** Keeps a value loaded some other way (read together with other items), as if get() had loaded it now. */
  set(value: T): void {
    this.entry = { value: Promise.resolve(value), at: this.clock() };
  }

  forget(): void {
    this.entry = undefined;
  }
}

/** Local mode: DynamoDB Local and no secret. Deployed, a missing key is an outage, never made up. */
export const isLocal = (): boolean => !config.signingKeySecretArn && Boolean(config.dynamodbEndpoint);

export const unavailable = (error: unknown): never => {
  log.error('signing keys unavailable', error);
  throw serviceUnavailable(5);
};
/** Drops this process's cached keys (after a local publish or rotation made here, and in tests). */
export const forgetCachedKeys = (): void => {
  for (const cache of caches) cache.forget();
};
