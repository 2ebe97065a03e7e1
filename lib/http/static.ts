import middy from '@middy/core';
import type { APIGatewayProxyEventV2 as Event, APIGatewayProxyStructuredResultV2 as Result } from 'aws-lambda';
import { baseHeaders, errorResponse, requestIdOf } from './errors.ts';
import { measured } from './measured.ts';
import { type RouteName, routeNamed } from './routes.ts';

export interface StaticAnswer {
  body: string;
  contentType: string;
  headers?: Record<string, string>;
}

/**
 * A public route that answers a document rather than `{ data }`; its errors keep the API envelope,
 * and it writes the same request line as every other route.
 */
export const staticEndpoint = (name: RouteName, answer: (event: Event) => StaticAnswer | Promise<StaticAnswer>) =>
  measured(
    name,
    routeNamed(name).path,
    middy<Event, Result>()
      .onError((request) => {
        request.response = errorResponse(request.error, requestIdOf(request.event, request.context));
      })
      .handler(async (event, context) => {
        const { body, contentType, headers = {} } = await answer(event);
        return { statusCode: 200, headers: { ...baseHeaders(requestIdOf(event, context)), 'content-type': contentType, ...headers }, body };
      }),
  );
