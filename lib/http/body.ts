import type { Request } from '@middy/core';
import jsonBodyParser from '@middy/http-json-body-parser';
import type { APIGatewayProxyEventV2 as Event } from 'aws-lambda';
import { AppError } from '#lib/core/errors.ts';

export const MAX_BODY_BYTES = 64 * 1024;
const JSON_TYPE = /^application\/([a-z0-9.+-]+\+)?json$/i;

/** 413 over 64 KiB, counted after API Gateway's base64 (without decoding it). */
export const requireBodySize = (event: Event): void => {
  const size = Buffer.byteLength(event.body ?? '', event.isBase64Encoded ? 'base64' : 'utf8');
  if (size > MAX_BODY_BYTES) throw new AppError('body_too_large');
};

/** A `charset` parameter other than UTF-8 (any case, quoted or not). */
const otherCharset = (parameter: string): boolean => {
  const [name = '', value = ''] = parameter.split('=');
  return (
    name.trim().toLowerCase() === 'charset' &&
    value
      .trim()
      .replace(/^"(.*)"$/, '$1')
      .toLowerCase() !== 'utf-8'
  );
};

/** A present Content-Type must be JSON in UTF-8; an absent one is taken as JSON (CONTRACT.md). */
export const requireJsonType = (event: Event): void => {
  const type = event.headers['content-type'];
  if (type === undefined) return;
  const [media = '', ...parameters] = type.split(';');
  if (!JSON_TYPE.test(media.trim())) throw new AppError('unsupported_media_type');
  if (parameters.some(otherCharset)) throw new AppError('unsupported_media_type', 'Send the request body as application/json in UTF-8.');
};

// Keeps a BOM, which JSON.parse refuses, as it always has for bodies that arrive as text.
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * The body as text. API Gateway sends bytes that are not valid UTF-8 base64-encoded; they are
 * malformed JSON (400), never text with U+FFFD in place of each bad byte.
 */
const bodyText = (event: Event): string => {
  if (!event.isBase64Encoded) return event.body ?? '';
  try {
    return utf8.decode(Buffer.from(event.body ?? '', 'base64'));
  } catch {
    throw new AppError('invalid_json', 'The request body is not valid UTF-8.');
  }
};

/**
 * The design card's parser. Its Content-Type check is off: ours (`requireJsonType`) runs before
 * authentication and takes an absent type as JSON, which the package's would refuse with 415.
 */
const parser = jsonBodyParser<Event>({ disableContentTypeCheck: true });

/** The package's refusal of a `__proto__` or `constructor.prototype` key (@middy/util jsonParseProtectProto). */
const FORBIDDEN_KEY = 'Forbidden key in JSON body';

/**
 * The body as a JSON object, parsed by @middy/http-json-body-parser on a copy of the request: the
 * package writes the parsed value over `event.body`, and the handler's event keeps the type API
 * Gateway gave it. An empty body counts as `{}`, so its missing fields are reported one by one
 * (422); malformed JSON is 400 `invalid_json`; anything but an object is 400 `invalid_body`.
 */
export const parseJsonObject = async (request: Request<Event>): Promise<Record<string, unknown>> => {
  const text = bodyText(request.event);
  if (text.trim() === '') return {};
  const parsing = { ...request, event: { ...request.event, body: text, isBase64Encoded: false } };
  let value: unknown;
  try {
    await parser.before?.(parsing);
    value = parsing.event.body;
  } catch (error) {
    // Its refusals are 422 HttpErrors (@middy/util createError); anything else is a bug: a 500.
    if (!(error instanceof Error && 'statusCode' in error)) throw error;
    // It refuses `__proto__` and `constructor.prototype` keys, which the contract ignores like any
    // unknown field (test/api/isolation.test.ts, D6): JSON.parse makes them plain own properties,
    // never a prototype, and zod's output drops them.
    if (error.message === FORBIDDEN_KEY) value = JSON.parse(text);
    // Its other refusal, "Invalid or malformed JSON was provided", is the contract's 400.
    else throw new AppError('invalid_json');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new AppError('invalid_body', 'The request body must be a JSON object.');
  }
  return value as Record<string, unknown>;
};
