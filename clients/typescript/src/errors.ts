import type { ErrorCode } from './types.js';

/** The answer the API gives for every non-2xx response. */
interface ErrorBody {
  error: { code: ErrorCode; message: string; fields?: Record<string, string> };
}

const isErrorBody = (body: unknown): body is ErrorBody => {
  const error = (body as { error?: { code?: unknown; message?: unknown } } | null)?.error;
  return typeof error?.code === 'string' && typeof error.message === 'string';
};

/**
 * A body not in the API's envelope comes from something in front of it (API Gateway's own
 * throttling or failures): keep its status meaningful.
 */
const codeForStatus = (status: number): ErrorCode =>
  status === 429 ? 'rate_limited' : status === 502 || status === 503 || status === 504 ? 'unavailable' : 'internal';

/** The API answered with a non-2xx status. */
export class RosterError extends Error {
  override readonly name = 'RosterError';
  readonly status: number;
  readonly code: ErrorCode;
  /** For `validation_failed` (and 400s): what is wrong with each field. */
  readonly fields: Record<string, string> | undefined;
  /** The `X-Request-Id` of the failed request, for the server's logs. */
  readonly requestId: string | undefined;
  /** Seconds to wait before trying again (`Retry-After`), on 429 and 503. */
  readonly retryAfter: number | undefined;

  constructor(init: {
    status: number;
    code: ErrorCode;
    message: string;
    fields?: Record<string, string> | undefined;
    requestId?: string | undefined;
    retryAfter?: number | undefined;
  }) {
    super(init.message);
    this.status = init.status;
    this.code = init.code;
    this.fields = init.fields;
    this.requestId = init.requestId;
    this.retryAfter = init.retryAfter;
  }

  /** From a response and its parsed body (text when it was not JSON). */
  static from(response: Response, body: unknown): RosterError {
    const retryAfter = response.headers.get('retry-after');
    const envelope = isErrorBody(body) ? body.error : undefined;
    return new RosterError({
      status: response.status,
      code: envelope?.code ?? codeForStatus(response.status),
      message: envelope?.message ?? `HTTP ${response.status} ${response.statusText}`.trim(),
      fields: envelope?.fields,
      requestId: response.headers.get('x-request-id') ?? undefined,
      retryAfter: retryAfter !== null && /^\d+$/.test(retryAfter) ? Number(retryAfter) : undefined,
    });
  }
}

/** No answer at all: the request could not be sent or its response was lost. */
export class RosterNetworkError extends Error {
  override readonly name = 'RosterNetworkError';

  constructor(cause: unknown) {
    super(`Roster API unreachable: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}
