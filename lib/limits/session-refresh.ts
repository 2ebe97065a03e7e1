import { config } from '#lib/core/config.ts';
import type { BucketSettings } from './token-bucket.ts';

/**
 * Refresh-token rotations per session: a token bucket kept on the session item, which the rotation
 * transaction updates anyway (lib/identity/refresh.ts runs `planBucket` on it); grace-window retries do not count.
 */
export const REFRESH_LIMITS: BucketSettings = {
  burst: config.refreshBurst,
  refill: config.refreshRefill,
  refillSeconds: config.refreshRefillSeconds,
};
