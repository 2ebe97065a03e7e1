import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Structured logs: one JSON object per line, written to stdout (stderr for errors) as it is, here
 * and on Lambda alike. Not through console.*: under the functions' JSON log format the Node runtime
 * wraps console output as `{timestamp, level, requestId, message: …}`, which buries our fields, and
 * an EMF `_aws` member, under `message`. A line that is already a JSON object is kept as written
 * (Lambda does not encode it twice) and its `level` and `timestamp` are the ones the runtime's
 * log-level filter reads; Powertools' Logger writes to stdout for the same reason.
 */
export type Level = 'INFO' | 'ERROR';

/** What the API request being served gathers for its one request line (lib/http/measured.ts writes it). */
export interface RequestRecord {
  /** API Gateway's id of the request, and Lambda's id of the invocation. */
  readonly requestId: string;
  readonly awsRequestId: string;
  /** The client's address as API Gateway saw it (for the audit log; never on the request line). */
  readonly sourceIp?: string;
  /** The caller's public user id, once known (never an e-mail address or a token). */
  userId?: string;
  /** The team's slug, when the request names one. */
  team?: string;
  /** The error code of the answer, on failures. */
  errorCode?: string;
  readonly dynamodb: { requests: number; readUnits: number; writeUnits: number };
  /** Domain events recorded during the request, by metric name. */
  readonly events: Map<string, number[]>;
}

// Many requests run at once in the local server's one process: a module-level record would mix them.
const requests = new AsyncLocalStorage<RequestRecord>();

/** The record of the API request this code runs for, if any (background functions have none). */
export const currentRequest = (): RequestRecord | undefined => requests.getStore();

/** Runs `work` (and everything it starts) as part of the request that `record` describes. */
export const withinRequest = <T>(record: RequestRecord, work: () => T): T => requests.run(record, work);

/** Adds what became known about the caller or the team to the current request's line. */
export const noteRequest = (fields: Pick<RequestRecord, 'userId' | 'team'>): void => {
  const record = currentRequest();
  if (record) Object.assign(record, fields);
};

const SEVERITY: Readonly<Record<string, number>> = { TRACE: 0, DEBUG: 1, INFO: 2, WARN: 3, ERROR: 4, FATAL: 5 };

/**
 * Writes one line: `timestamp` (RFC 3339) and `level` first, then the fields. Lines below
 * AWS_LAMBDA_LOG_LEVEL (which Lambda sets from the function's application log level, and filters
 * by anyway) are not written: locally the same variable quiets a test run.
 */
export const writeLine = (level: Level, fields: Record<string, unknown>): void => {
  if ((SEVERITY[level] ?? 0) < (SEVERITY[process.env.AWS_LAMBDA_LOG_LEVEL?.toUpperCase() ?? 'INFO'] ?? 0)) return;
  const line = `${JSON.stringify({ timestamp: new Date().toISOString(), level, ...fields })}\n`;
  (level === 'ERROR' ? process.stderr : process.stdout).write(line);
};

const EMAIL = /[a-z0-9._%+-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}/giu;

/** Error texts may quote a key or an input (a database error naming an e-mail claim, say). */
const redacted = (value: unknown): unknown => (typeof value === 'string' ? value.replace(EMAIL, '<e-mail>') : value);

/** Error causes are logged by name and message only, with e-mail addresses masked. */
const describe = (error: unknown) =>
  error instanceof Error ? { error: error.name, detail: redacted(error.message) } : { error: redacted(String(error)) };

/** The request's ids on every line written while serving it, so a line joins its request line. */
const requestIds = () => {
  const record = currentRequest();
  return record ? { requestId: record.requestId, awsRequestId: record.awsRequestId } : {};
};

export const log = {
  info: (message: string, fields: Record<string, unknown> = {}): void => writeLine('INFO', { message, ...requestIds(), ...fields }),
  error: (message: string, error: unknown, fields: Record<string, unknown> = {}): void =>
    writeLine('ERROR', {
      message,
      ...requestIds(),
      ...describe(error),
      ...Object.fromEntries(Object.entries(fields).map(([key, value]) => [key, redacted(value)])),
    }),
};
