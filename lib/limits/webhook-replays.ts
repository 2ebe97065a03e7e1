import { config } from '#lib/core/config.ts';
import type { Db } from '#lib/db/service.ts';
import { type BucketSettings, type BucketToken, takeToken } from './token-bucket.ts';

/**
 * Webhook replays one team may ask for per hour (docs/webhooks.md): a token bucket, like the mail
 * allowances, taken before the replay is queued. Each replay is a message of up to 8 POSTs to an
 * address the team registered, so replays cannot be used to flood a receiver, or the delivery
 * capacity every team shares.
 */
export const WEBHOOK_REPLAY_LIMITS: BucketSettings = {
  burst: config.webhookReplaysPerTeamHour,
  refill: config.webhookReplaysPerTeamHour,
  refillSeconds: 3600,
};

/** Takes a token from the team's replay bucket. Throws 429 `rate_limited` (with Retry-After) or 503. */
export const limitWebhookReplays = (db: Db, teamId: number, now: Date, s: BucketSettings = WEBHOOK_REPLAY_LIMITS): Promise<BucketToken> =>
  takeToken(db, 'webhook-replay', String(teamId), now, s);
