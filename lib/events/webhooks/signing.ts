import { createHmac, randomBytes } from 'node:crypto';
import { epochSeconds } from '#lib/core/time.ts';

/**
 * Standard Webhooks v1 (https://www.standardwebhooks.com): a secret is `whsec_` and the base64 of
 * its key; a message is signed with HMAC-SHA256 over `${id}.${timestamp}.${body}`, and the
 * receiver checks the signature, then that the timestamp is recent (its replay window).
 */
const PREFIX = 'whsec_';

/** Bytes of key in a new secret: the specification asks for 24 to 64. */
const SECRET_BYTES = 32;

export const newWebhookSecret = (): string => `${PREFIX}${randomBytes(SECRET_BYTES).toString('base64')}`;

/** The HMAC key of a secret: the base64 after `whsec_`. */
const keyOf = (secret: string): Buffer => Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64');

export interface SignatureHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/**
 * The three headers of one delivery attempt. `id` is the message's (the same on every attempt, so
 * receivers de-duplicate); `at` is the attempt's time, so a retry carries a fresh timestamp.
 */
export const signatureHeaders = (secret: string, id: string, at: Date, body: string): SignatureHeaders => {
  const timestamp = String(epochSeconds(at));
  const signature = createHmac('sha256', keyOf(secret)).update(`${id}.${timestamp}.${body}`).digest('base64');
  return { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${signature}` };
};
