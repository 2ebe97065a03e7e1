import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AppError, STATUS } from '../../lib/errors.ts';
import { errorResponse } from '../../lib/http/errors.ts';

const contract = readFileSync(new URL('../../../shared/CONTRACT.md', import.meta.url), 'utf8');

describe('error table', () => {
  it('has every error code CONTRACT.md names, with its status', () => {
    const table = contract.slice(contract.indexOf('## Status codes'), contract.indexOf('Sign-in with an unknown'));
    const rows = table.split('\n').filter((line) => /^\| \d{3} \|/.test(line));
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

  it('never shows an unexpected error: 500 with the request id only', () => {
    const res = errorResponse(new Error('ValidationException: table arn:aws:dynamodb:secret-table'), 'req-4');
    expect(res.statusCode).toBe(500);
    expect(res.body).not.toContain('arn:aws');
    expect(res.body).toContain('req-4');
    expect(res.headers?.['x-request-id']).toBe('req-4');
  });
});
