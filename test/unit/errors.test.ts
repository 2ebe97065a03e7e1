import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AppError, STATUS, rateLimited, serviceUnavailable } from '#lib/core/errors.ts';
import { errorResponse } from '#lib/http/errors.ts';

/** The contract's "Status codes" table, copied into the repository (see the file's note). */
const contractTable = readFileSync(new URL('../fixtures/contract-status-codes.md', import.meta.url), 'utf8');

describe('error table', () => {
  it('has every error code CONTRACT.md names, with its status', () => {
    const rows = contractTable.split('\n').filter((line) => /^\| \d{3} \|/.test(line));
    expect(rows.length).toBeGreaterThan(10);
    for (const row of rows) {
      const status = Number(row.slice(2, 5));
      const examples = row.split('|').at(-2) ?? '';
      // The 422 row also names the `fields` member of the envelope, which is not a code.
      for (const [, code] of examples.replace('`fields`', '').matchAll(/`([a-z_]+)`/g)) {
        expect(STATUS[code as keyof typeof STATUS], code).toBe(status);
      }
    }
  });

  it('answers an AppError in the envelope, with WWW-Authenticate on 401', () => {
    const res = errorResponse(new AppError('unauthorized'), 'req-1');
    expect(res.statusCode).toBe(401);
    expect(res.headers?.['www-authenticate']).toMatch(/^Token/);
    expect(res.headers?.['content-type']).toBe('application/json; charset=utf-8');
    expect(JSON.parse(res.body as string)).toEqual({ error: { code: 'unauthorized', message: expect.any(String) } });
  });

  it('maps throttling and network failures to 503 with Retry-After', () => {
    for (const name of ['ProvisionedThroughputExceededException', 'ThrottlingException', 'TimeoutError']) {
      const sdk = Object.assign(new Error('boom'), { name });
      const res = errorResponse(new Error('wrapped', { cause: sdk }), 'req-2');
      expect(res.statusCode).toBe(503);
      expect(res.headers?.['retry-after']).toBe('1');
    }
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    expect(errorResponse(refused, 'req-3').statusCode).toBe(503);
  });

  it('builds 503 `unavailable` and 429 `rate_limited` with Retry-After in whole seconds', () => {
    expect(serviceUnavailable()).toMatchObject({ code: 'unavailable', status: 503, headers: { 'Retry-After': '1' } });
    expect(serviceUnavailable(5, 'Later.')).toMatchObject({ code: 'unavailable', message: 'Later.', headers: { 'Retry-After': '5' } });
    expect(rateLimited(1).headers).toEqual({ 'Retry-After': '1' });
    expect(rateLimited(0).headers).toEqual({ 'Retry-After': '1' });
    expect(rateLimited(2001).headers).toEqual({ 'Retry-After': '3' });
  });

  it('never shows an unexpected error: 500 with the request id only', () => {
    const res = errorResponse(new Error('ValidationException: table arn:aws:dynamodb:secret-table'), 'req-4');
    expect(res.statusCode).toBe(500);
    expect(res.body).not.toContain('arn:aws');
    expect(res.body).toContain('req-4');
    expect(res.headers?.['x-request-id']).toBe('req-4');
  });
});
