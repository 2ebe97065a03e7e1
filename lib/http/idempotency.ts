import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEventV2 as Event, APIGatewayProxyStructuredResultV2 as Result, Context } from 'aws-lambda';
import { type Claims, readAsActor, verifyClaims } from '../auth/session-items.ts';
import { db } from '../db/service.ts';
import { AppError } from '../errors.ts';
import { IDEMPOTENCY_KEY, type HeldKey, claimKey, fingerprintOf, keepsAnswer, releaseKey, settleKey } from '../idempotency.ts';
import { baseHeaders, requestIdOf } from './errors.ts';
import { FUNCTION_DEFAULTS, type Route } from './routes.ts';

/** The request header, as API Gateway hands it over (lowercased). */
export const IDEMPOTENCY_HEADER = 'idempotency-key';
/** On a replayed answer, as Stripe marks them. */
export const REPLAYED_HEADER = 'idempotent-replayed';

/**
 * How long a claim is held before it is taken to be dead: the function's timeout and a second,
 * so a live request never loses its claim.
 */
const HOLD_MS = (FUNCTION_DEFAULTS.timeoutSeconds + 1) * 1000;

/**
 * Errors of requests that may still be acting when answered (the function's time ran out): their
 * claim is kept until its lock runs out rather than freed, so a retry cannot run beside them.
 */
const unfinished = new WeakSet<Error>();
export const stillRunning = (error: AppError): AppError => {
  unfinished.add(error);
  return error;
};

type State = { actor?: Claims; json?: Record<string, unknown>; held?: HeldKey };
type Stage = MiddlewareObj<Event, Result, Error, Context & { roster: State }>;

const badKey = () =>
  new AppError('validation_failed', undefined, {
    fields: { 'Idempotency-Key': 'must be 1 to 255 printable ASCII characters' },
  });

/**
 * The `Idempotency-Key` stage, after authentication and the body's parsing. With a key: the
 * token is verified first (a forged one must not claim keys under someone's id), then the claim
 * decides: run, replay (to a live session only, as any answer), 422 or 409. After the use case,
 * the answer is stored (keepsAnswer) or the claim freed.
 */
export const idempotency = (route: Route): Stage => {
  const settle = async (held: HeldKey | undefined, response: Result | null | undefined, error?: Error): Promise<void> => {
    if (!held) return;
    if (error && unfinished.has(error)) return;
    const status = response?.statusCode ?? 500;
    if (keepsAnswer(status)) await settleKey(db(), held, { status, body: typeof response?.body === 'string' ? response.body : '' });
    else await releaseKey(db(), held);
  };
  return {
    before: async ({ event, context }) => {
      const key = event.headers[IDEMPOTENCY_HEADER];
      const claims = context.roster.actor;
      if (key === undefined || !claims) return undefined;
      if (!IDEMPOTENCY_KEY.test(key)) throw badKey();
      const { userUuid } = await verifyClaims(claims);
      const fingerprint = fingerprintOf(route.name, event.rawPath, context.roster.json);
      const claim = await claimKey(db(), { userUuid, key }, fingerprint, Date.now(), HOLD_MS);
      if (claim.kind === 'run') {
        context.roster.held = claim.held;
        return undefined;
      }
      await readAsActor(db(), claims, []);
      return {
        statusCode: claim.status,
        headers: { ...baseHeaders(requestIdOf(event, context)), [REPLAYED_HEADER]: 'true' },
        body: claim.body,
      };
    },
    after: async ({ response, context }) => settle(context.roster.held, response),
    onError: async ({ response, error, context }) => settle(context.roster.held, response, error ?? undefined),
  };
};
