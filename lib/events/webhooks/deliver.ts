import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { config } from '#lib/core/config.ts';
import type { AuditEntry } from '#lib/wire/responses.ts';
import { type Resolved, type Resolver, RefusedUrl, checkedAddresses, parseWebhookUrl, systemResolver } from './addresses.ts';
import { signatureHeaders } from './signing.ts';

/** One delivery attempt's bound, from resolving the host to the end of the answer (docs/webhooks.md). */
export const DELIVERY_TIMEOUT_MS = 10_000;

/** Bytes of the receiver's answer read before the connection is closed: only its status matters. */
export const RESPONSE_CAP_BYTES = 4096;

/** A message as sent: its id (the audit entry's, so receivers de-duplicate) and its JSON body. */
export interface WebhookMessage {
  id: string;
  body: string;
}

/**
 * The message of one audit entry: `{ type, timestamp, data }`, `data` being the entry as
 * `GET /api/teams/{slug}/audit` shows it with the team's id and slug (at the time it is sent; null
 * once the team is deleted).
 */
export const webhookMessage = (entry: AuditEntry, team: { id: number; slug: string | null }): WebhookMessage => ({
  id: entry.id,
  body: JSON.stringify({ type: entry.action, timestamp: entry.createdAt, data: { ...entry, team } }),
});

export interface DeliveryResult {
  /** A 2xx answer; anything else (another status, a timeout, a refused address) is to be retried. */
  ok: boolean;
  status?: number;
  error?: string;
  durationMs: number;
}

export interface DeliveryOptions {
  timeoutMs?: number;
  resolve?: Resolver;
  /** WEBHOOKS_ALLOW_PRIVATE_URLS: loopback and http allowed (local use and tests). */
  allowPrivate?: boolean;
}

/** Rejects when `signal` aborts first: the timeout bounds the resolution too. */
const unlessAborted = <T>(work: Promise<T>, signal: AbortSignal): Promise<T> =>
  Promise.race([
    work,
    new Promise<never>((_, reject) => {
      signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
    }),
  ]);

/**
 * POSTs `body` to `url`, connecting to `pinned` whatever the host resolves to by now: the socket
 * asks the `lookup` option, not DNS, so a rebinding after the check cannot reach another address.
 * TLS still checks the certificate against the URL's host. No redirect is followed (node:http
 * follows none); a fresh connection each time (`agent: false`), never one pooled for another address.
 * Resolves with the status once the answer ends or RESPONSE_CAP_BYTES of it are read.
 */
const post = (url: URL, pinned: Resolved, headers: Record<string, string>, body: string, signal: AbortSignal): Promise<number> =>
  new Promise((resolve, reject) => {
    const lookup: LookupFunction = (_host, options, callback) => {
      if (options.all) callback(null, [{ address: pinned.address, family: pinned.family }]);
      else callback(null, pinned.address, pinned.family);
    };
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const request = send(url, { method: 'POST', headers, lookup, signal, agent: false }, (response) => {
      const status = response.statusCode ?? 0;
      let read = 0;
      let capped = false;
      response.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read >= RESPONSE_CAP_BYTES) {
          capped = true;
          response.destroy();
        }
      });
      response.on('error', reject);
      response.on('close', () => (capped || response.complete ? resolve(status) : reject(new Error('the answer was cut off'))));
    });
    request.on('error', reject);
    request.end(body);
  });

const describe = (error: unknown, signal: AbortSignal, timeoutMs: number): string => {
  if (signal.aborted) return `timed out after ${timeoutMs} ms`;
  if (error instanceof RefusedUrl) return `refused: ${error.message}`;
  if (error instanceof Error) return 'code' in error ? `${String(error.code)}: ${error.message}` : error.message;
  return String(error);
};

/**
 * Delivers one message to one endpoint, signed with its secret (Standard Webhooks v1). The URL's
 * host is resolved and every address checked again now, not only at registration (the records may
 * have changed since), and the connection goes to the address checked. One attempt: the caller
 * retries a failure.
 */
export const deliver = async (
  endpoint: { url: string; secret: string },
  message: WebhookMessage,
  options: DeliveryOptions = {},
): Promise<DeliveryResult> => {
  const started = performance.now();
  const { timeoutMs = DELIVERY_TIMEOUT_MS, resolve = systemResolver, allowPrivate = config.webhooksAllowPrivateUrls } = options;
  const signal = AbortSignal.timeout(timeoutMs);
  const result = (outcome: Omit<DeliveryResult, 'durationMs'>): DeliveryResult => ({
    ...outcome,
    durationMs: Math.round(performance.now() - started),
  });
  try {
    const { url, host } = parseWebhookUrl(endpoint.url, allowPrivate);
    const [pinned] = await unlessAborted(checkedAddresses(host, allowPrivate, resolve), signal);
    const headers = {
      ...signatureHeaders(endpoint.secret, message.id, new Date(), message.body),
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(message.body)),
      'user-agent': 'Roster-Webhooks/1',
    };
    const status = await post(url, pinned as Resolved, headers, message.body, signal);
    return result(status >= 200 && status < 300 ? { ok: true, status } : { ok: false, status, error: `answered ${status}` });
  } catch (error) {
    return result({ ok: false, error: describe(error, signal, timeoutMs) });
  }
};
