import middy from '@middy/core';
import type { APIGatewayProxyEventV2 as Event, APIGatewayProxyStructuredResultV2 as Result } from 'aws-lambda';
import { AppError } from '#lib/core/errors.ts';
import { errorResponse, requestIdOf } from '#lib/http/errors.ts';
import { measured } from '#lib/http/measured.ts';
import { FALLBACK, matchRoute } from '#lib/http/routes.ts';

/** API Gateway's default route: an unknown path is 404, a known path with another method 405. */
export const handler = measured(
  FALLBACK,
  '$default',
  middy<Event, Result>().handler(async (event, context) => {
    const match = matchRoute(event.requestContext.http.method, event.rawPath);
    const error =
      match && 'allow' in match
        ? new AppError('method_not_allowed', undefined, { headers: { Allow: match.allow.join(', ') } })
        : new AppError('not_found', 'No such route.');
    return errorResponse(error, requestIdOf(event, context));
  }),
);
