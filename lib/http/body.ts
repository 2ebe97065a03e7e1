import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { AppError } from '../errors.ts';

export const MAX_BODY_BYTES = 64 * 1024;
const JSON_TYPE = /^application\/([a-z0-9.+-]+\+)?json\s*(;|$)/i;

/** The request body as text, after API Gateway's base64 (the 64 KiB cap counts decoded bytes). */
export const bodyText = (event: APIGatewayProxyEventV2): string => {
  const raw = event.body ?? '';
  const text = event.isBase64Encoded ? Buffer.from(raw, 'base64').toString('utf8') : raw;
  if (Buffer.byteLength(text, 'utf8') > MAX_BODY_BYTES) throw new AppError('body_too_large');
  return text;
};

/** A present Content-Type must be JSON; an absent one is taken as JSON (CONTRACT.md). */
export const requireJsonType = (event: APIGatewayProxyEventV2): void => {
  const type = event.headers['content-type'];
  if (type !== undefined && !JSON_TYPE.test(type)) throw new AppError('unsupported_media_type');
};

/**
 * The body as a JSON object. An empty body counts as `{}`, so its missing fields are reported
 * one by one (422); anything but an object is 400 `invalid_body`.
 */
export const parseJsonObject = (text: string): Record<string, unknown> => {
  if (text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new AppError('invalid_json');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new AppError('invalid_body', 'The request body must be a JSON object.');
  }
  return value as Record<string, unknown>;
};
