import type { APIGatewayProxyEventV2 as Event, APIGatewayProxyStructuredResultV2 as Result, Context } from 'aws-lambda';
import { AppError, serviceUnavailable } from '#lib/core/errors.ts';
import { currentRequest, log } from '#lib/core/log.ts';

/** API Gateway's id of the request (the local server sets one too), else Lambda's. */
export const requestIdOf = (event: Event, context: Context): string => event.requestContext?.requestId ?? context.awsRequestId;

/** Headers on every response, errors and 404s included (CONTRACT.md, SECURITY-TESTS F1). */
export const baseHeaders = (requestId: string): Record<string, string> => ({
  'content-type': 'application/json; charset=utf-8',
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-store',
  'x-request-id': requestId,
});

export const jsonResponse = (status: number, body: unknown, requestId: string, headers: Record<string, string> = {}): Result => ({
  statusCode: status,
  headers: { ...baseHeaders(requestId), ...headers },
  body: JSON.stringify(body),
});

/** SDK and network failures that mean "the database is unreachable or throttling": 503, retry later. */
const TRANSIENT = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  // SQS (the webhook queue) throttling a send.
  'RequestThrottled',
  // SES throttling or over its sending rate (the mailer).
  'TooManyRequestsException',
  'LimitExceededException',
  'InternalServerError',
  'ServiceUnavailable',
  'TimeoutError',
  'RequestTimeout',
  'AbortError',
]);
const NETWORK = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN']);

export const isTransient = (error: unknown): boolean => {
  for (let e = error; e instanceof Error; e = e.cause) {
    if (TRANSIENT.has(e.name) || NETWORK.has((e as NodeJS.ErrnoException).code ?? '')) return true;
  }
  return false;
};

const challenge = { 'www-authenticate': 'Token realm="roster"' };

/**
 * What the caller is told of `error`: AppErrors speak for themselves; transient database failures
 * become 503; anything else is logged and becomes a bare 500 with the request id, never its
 * message. A request's answer (errorResponse), or one row's of a bulk request (lib/teams/invites/bulk.ts).
 */
export const appErrorOf = (error: unknown, requestId: string): AppError => {
  if (error instanceof AppError) return error;
  if (isTransient(error)) {
    log.error('database unavailable', error, { requestId });
    return serviceUnavailable();
  }
  log.error('unexpected error', error, { requestId, stack: error instanceof Error ? error.stack : undefined });
  return new AppError('internal', `Something went wrong on our side (request ${requestId}).`);
};

/** The only place an error becomes a response (appErrorOf). The code goes on the request's line (./measured.ts). */
export const errorResponse = (error: unknown, requestId: string): Result => {
  const appError = appErrorOf(error, requestId);
  const record = currentRequest();
  if (record) record.errorCode = appError.code;
  const body = {
    error: {
      code: appError.code,
      message: appError.message,
      ...(appError.fields ? { fields: appError.fields } : {}),
    },
  };
  const headers = { ...(appError.status === 401 ? challenge : {}), ...lowercaseKeys(appError.headers ?? {}) };
  return jsonResponse(appError.status, body, requestId, headers);
};

const lowercaseKeys = (headers: Record<string, string>): Record<string, string> =>
  Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
