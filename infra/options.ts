/**
 * The deploy-time options an operator sets with `cdk deploy -c name=value` (docs/scale.md explains
 * the numbers). Every default must deploy and serve on a fresh AWS account, whose Lambda
 * concurrency quota may be as low as 10; the riskier settings are opt-in.
 */
import type { Node } from 'constructs';

export interface Throttle {
  rateLimit: number;
  burstLimit: number;
}

export interface DeployOptions {
  /** API Gateway's per-route ceiling (HTTP API stage default route settings): every route, all callers together. */
  routes: Throttle;
  /** The same for sign-up, sign-in, refresh and password change, where each request may hash a password. */
  credentials: Throttle;
  /** Reserve the route table's concurrency per function (off by default: it needs quota; see below). */
  reservedConcurrency: boolean;
}

/**
 * The defaults. The gateway is a safety ceiling against a runaway client's bill, not the abuse
 * control (that lives in the table: lib/auth/limits.ts), so it sits above what one route's
 * functions and the table sustain on a default account (docs/scale.md): no route below 1,000
 * requests a second, no credential route below 100.
 */
export const DEFAULT_OPTIONS: DeployOptions = {
  routes: { rateLimit: 1000, burstLimit: 2000 },
  credentials: { rateLimit: 100, burstLimit: 200 },
  reservedConcurrency: false,
};

/** Lambda keeps this much of an account's concurrency unreserved; reservations must leave it. */
export const UNRESERVED_MINIMUM = 100;

/** `-c` values arrive as strings, cdk.json and tests may give numbers or booleans. */
const positiveInt = (key: string, raw: unknown, fallback: number): number => {
  if (raw === undefined) return fallback;
  const value = typeof raw === 'number' ? raw : Number(String(raw).trim());
  if (!Number.isSafeInteger(value) || value <= 0) throw new Error(`context ${key} must be a positive integer, not ${JSON.stringify(raw)}`);
  return value;
};

const flag = (key: string, raw: unknown, fallback: boolean): boolean => {
  if (raw === undefined) return fallback;
  if (raw === true || raw === 'true') return true;
  if (raw === false || raw === 'false') return false;
  throw new Error(`context ${key} must be true or false, not ${JSON.stringify(raw)}`);
};

const throttle = (node: Node, rateKey: string, burstKey: string, fallback: Throttle): Throttle => {
  const rateLimit = positiveInt(rateKey, node.tryGetContext(rateKey), fallback.rateLimit);
  const burstLimit = positiveInt(burstKey, node.tryGetContext(burstKey), fallback.burstLimit);
  // API Gateway takes any pair, but a burst below the rate cannot absorb one second's requests.
  if (burstLimit < rateLimit) throw new Error(`context ${burstKey} (${burstLimit}) must be at least ${rateKey} (${rateLimit})`);
  return { rateLimit, burstLimit };
};

/** The options from the construct tree's context, checked; a bad value fails synth with one sentence. */
export const deployOptions = (node: Node): DeployOptions => ({
  routes: throttle(node, 'throttleRate', 'throttleBurst', DEFAULT_OPTIONS.routes),
  credentials: throttle(node, 'credentialThrottleRate', 'credentialThrottleBurst', DEFAULT_OPTIONS.credentials),
  reservedConcurrency: flag('reservedConcurrency', node.tryGetContext('reservedConcurrency'), DEFAULT_OPTIONS.reservedConcurrency),
});
