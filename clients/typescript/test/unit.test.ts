import { createServer } from 'node:net';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { type ErrorCode, RosterClient, RosterError, RosterNetworkError } from '../src/index.js';
import { nextCursor } from '../src/pagination.js';

describe('nextCursor', () => {
  it('reads the cursor of the rel="next" link', () => {
    expect(nextCursor('<https://api.example.com/api/teams?limit=1&cursor=abc_-1>; rel="next"')).toBe('abc_-1');
    expect(nextCursor('<https://x.test/a?cursor=p>; rel="prev", <https://x.test/a?cursor=n>; rel="next"')).toBe('n');
  });

  it('is null without a next link', () => {
    expect(nextCursor(null)).toBeNull();
    expect(nextCursor('<https://x.test/a?cursor=p>; rel="prev"')).toBeNull();
  });
});

describe('RosterError.from', () => {
  it('takes code, message, fields, request id and Retry-After from the answer', () => {
    const response = new Response(null, { status: 429, headers: { 'x-request-id': 'req-1', 'retry-after': '7' } });
    const error = RosterError.from(response, { error: { code: 'rate_limited', message: 'Slow down.', fields: { email: 'x' } } });
    expect(error).toMatchObject({
      status: 429,
      code: 'rate_limited',
      message: 'Slow down.',
      fields: { email: 'x' },
      requestId: 'req-1',
      retryAfter: 7,
    });
  });

  it('keeps the status meaningful for bodies from in front of the API', () => {
    const error = RosterError.from(new Response(null, { status: 503, statusText: 'Service Unavailable' }), {
      message: 'Service Unavailable',
    });
    expect(error).toMatchObject({
      status: 503,
      code: 'unavailable',
      message: 'HTTP 503 Service Unavailable',
      fields: undefined,
      retryAfter: undefined,
    });
  });

  it('has the error codes of the schema as its code type', () => {
    expectTypeOf<'slug_taken' | 'validation_failed' | 'rate_limited' | 'invite_expired'>().toExtend<ErrorCode>();
    expectTypeOf<'token_expired' | 'email_not_verified' | 'sole_owner'>().toExtend<ErrorCode>();
    expectTypeOf<string>().not.toExtend<ErrorCode>();
  });
});

it('reports an unreachable API as a RosterNetworkError, not a RosterError', async () => {
  const closed = await new Promise<number>((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
  const client = new RosterClient({ baseUrl: `http://127.0.0.1:${closed}` });
  const error = await client.jwks().catch((e: unknown) => e);
  expect(error).toBeInstanceOf(RosterNetworkError);
  expect(error).not.toBeInstanceOf(RosterError);
});
