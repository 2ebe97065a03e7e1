import middy from '@middy/core';
import type { APIGatewayProxyEventV2 as Event, APIGatewayProxyStructuredResultV2 as Result } from 'aws-lambda';
import { JWKS_MAX_AGE_SECONDS, publishedJwks } from '../lib/auth/keys.ts';
import { errorResponse, jsonResponse } from '../lib/http/errors.ts';

/**
 * GET /.well-known/jwks.json: the public keys that verify access tokens, as a bare JWK Set (RFC
 * 7517 §5, not enveloped in `data`: JWT libraries read it as is). Public, cacheable for a minute,
 * and at most 10 s behind the table, so a verifier elsewhere that meets a new kid and refetches
 * finds the key; errors keep the API envelope.
 */
export const handler = middy<Event, Result>()
  .onError((request) => {
    request.response = errorResponse(request.error, request.event.requestContext?.requestId ?? request.context.awsRequestId);
  })
  .handler(async (event, context) =>
    jsonResponse(200, await publishedJwks(), event.requestContext?.requestId ?? context.awsRequestId, {
      'cache-control': `public, max-age=${JWKS_MAX_AGE_SECONDS}`,
    }),
  );
