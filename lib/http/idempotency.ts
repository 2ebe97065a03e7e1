import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEventV2 as Event, APIGatewayProxyStructuredResultV2 as Result, Context } from 'aws-lambda';
import { type Claims, readAsActor, verifyClaims } from '#lib/auth/session-items.ts';
import { AppError } from '#lib/core/errors.ts';
import { db } from '#lib/db/service.ts';
import { baseHeaders, requestIdOf } from './errors.ts';
import {
  IDEMPOTENCY_KEY,
  type HeldKey,
  claimKey,
  fingerprintOf,
  keepsAnswer,
  releaseKey,
  settleKey,
  settleUnfinished,
} from './idempotency-store.ts';
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
 * 503 is stored with the claim's lock kept (settleUnfinished), never freed, so a retry cannot run
 * beside them.
 */
const unfinished = new WeakSet<Error>();
export const stillRunning = (error: AppError): AppError => {
  unfinished.add(error);
  return error;
};

type State = { actor?: Claims; json?: Record<string, unknown>; held?: HeldKey; unkept?: true };
type Stage = MiddlewareObj<Event, Result, Error, Context & { roster: State }>;

const badKey = () =>
  new AppError('validation_failed', undefined, {
    fields: { 'Idempotency-Key': 'must be 1 to 255 printable ASCII characters' },
  });

/**
 * After the use case: stores the answer on the claim the request holds (keepsAnswer), or frees
 * the claim: for a 401, 429, 5xx, a 409 `conflict` (its message says "try again"), or an answer
 * the use case marked as not to keep (`unkept`: a bulk answer with rows to retry). The endpoint's
 * handler calls it when the use case ends, so a run that outlives its 503 still settles; onError
 * for the errors.
 */
export const settleHeld = async (state: State, response: Result | null | undefined, error?: Error): Promise<void> => {
  const { held } = state;
  if (!held) return;
  const answer = { status: response?.statusCode ?? 500, body: typeof response?.body === 'string' ? response.body : '' };
  if (error && unfinished.has(error)) await settleUnfinished(db(), held, answer);
  else if (keepsAnswer(answer.status) && !state.unkept && !(error instanceof AppError && error.code === 'conflict'))
    await settleKey(db(), held, answer);
  else await releaseKey(db(), held);
};

/**
 * The `Idempotency-Key` stage, after authentication and the body's parsing. With a key: the
 * token is verified first (a forged one must not claim keys under someone's id), then the claim
 * decides: run, replay (to a live session only, as any answer), 422 or 409. The request is the
 * route, the path with its query string, and the parsed body.
 */
export const idempotency = (route: Route): Stage => {
  return {
    before: async ({ event, context }) => {
      const key = event.headers[IDEMPOTENCY_HEADER];
      const claims = context.roster.actor;
      if (key === undefined || !claims) return undefined;
      if (!IDEMPOTENCY_KEY.test(key)) throw badKey();
      const { userUuid } = await verifyClaims(claims);
      const fingerprint = fingerprintOf(route.name, `${event.rawPath}?${event.rawQueryString ?? ''}`, context.roster.json);
      // Anything but running (a replay, 409, 422) is answered to a live session only, as any answer.
      const claim = await claimKey(db(), { userUuid, key }, fingerprint, Date.now(), HOLD_MS).catch(async (error: unknown) => {
        await readAsActor(db(), claims, []);
        throw error;
      });
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
    onError: async ({ response, error, context }) => settleHeld(context.roster, response, error ?? undefined),
  };
};
