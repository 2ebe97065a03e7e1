import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type RequestRecord, log, noteRequest, withinRequest, writeLine } from '#lib/core/log.ts';

/** What the code under test wrote to stdout and stderr, line by line. */
let out: string[] = [];
let err: string[] = [];
beforeEach(() => {
  vi.stubEnv('AWS_LAMBDA_LOG_LEVEL', 'INFO');
  out = [];
  err = [];
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => out.push(String(chunk)) > 0);
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => err.push(String(chunk)) > 0);
});
afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

const parsed = (chunks: string[]) => chunks.map((chunk) => JSON.parse(chunk) as Record<string, unknown>);

const record = (): RequestRecord => ({
  requestId: 'api-1',
  awsRequestId: 'lambda-1',
  dynamodb: { requests: 0, readUnits: 0, writeUnits: 0 },
  events: new Map(),
});

describe('log lines', () => {
  it('are one JSON object per line, timestamp and level first; errors go to stderr', () => {
    writeLine('INFO', { message: 'hello', n: 1 });
    writeLine('ERROR', { message: 'oops' });
    expect(out).toHaveLength(1);
    expect(out[0]).toMatch(/^\{"timestamp":"[^"]+","level":"INFO","message":"hello","n":1\}\n$/);
    expect(Date.parse(parsed(out)[0]?.timestamp as string)).toBeCloseTo(Date.now(), -4);
    expect(parsed(err)).toEqual([{ timestamp: expect.any(String), level: 'ERROR', message: 'oops' }]);
  });

  it('below AWS_LAMBDA_LOG_LEVEL are not written (Lambda would drop them)', () => {
    vi.stubEnv('AWS_LAMBDA_LOG_LEVEL', 'error');
    log.info('quiet');
    log.error('loud', new Error('x'));
    expect(out).toEqual([]);
    expect(parsed(err)).toMatchObject([{ message: 'loud' }]);
  });

  it('carry the request ids inside a request, and nothing of one outside', () => {
    log.info('outside');
    withinRequest(record(), () => log.info('inside', { messageId: 'm-1' }));
    expect(parsed(out)).toEqual([
      { timestamp: expect.any(String), level: 'INFO', message: 'outside' },
      { timestamp: expect.any(String), level: 'INFO', message: 'inside', requestId: 'api-1', awsRequestId: 'lambda-1', messageId: 'm-1' },
    ]);
  });

  it('log an error by name and message, with e-mail addresses masked and stack frames kept', () => {
    const error = new Error('no claim for Jane.Doe+x@mail.example.co.uk');
    error.stack = 'Error: no claim for jane@example.com\n    at f (/var/task/node_modules/@aws-sdk/client-dynamodb/dist/index.js:1:2)';
    log.error('unexpected error', error, { stack: error.stack, requestId: 'r' });
    const [line] = parsed(err);
    expect(line).toMatchObject({
      level: 'ERROR',
      message: 'unexpected error',
      error: 'Error',
      detail: 'no claim for <e-mail>',
      requestId: 'r',
    });
    expect(line?.stack).toBe('Error: no claim for <e-mail>\n    at f (/var/task/node_modules/@aws-sdk/client-dynamodb/dist/index.js:1:2)');
    log.error('odd', 'thrown string from a@b.io');
    expect(parsed(err)[1]).toMatchObject({ error: 'thrown string from <e-mail>' });
  });

  it('note the caller and team on the current request only', () => {
    noteRequest({ userId: 'nobody' });
    const r = record();
    withinRequest(r, () => noteRequest({ userId: 'u-1', team: 'acme' }));
    expect(r).toMatchObject({ userId: 'u-1', team: 'acme' });
  });
});
