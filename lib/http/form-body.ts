import type { APIGatewayProxyEventV2 as Event } from 'aws-lambda';

/** A form's fields, far below any form of ours: a larger body is not one. */
const MAX_FORM_BYTES = 4096;

/** A header's value whatever its case (API Gateway lowercases them; the local server too). */
const header = (event: Event, name: string): string => event.headers?.[name] ?? '';

/**
 * The fields of an HTML form or of RFC 8058's one-click POST: `application/x-www-form-urlencoded`,
 * or `multipart/form-data` (which RFC 8058 allows too) with plain text fields only. Empty for any
 * other body, a body over 4 KiB, or one that does not parse: the caller then treats it as no form.
 */
export const formFields = (event: Event): Map<string, string> => {
  const raw = event.body ?? '';
  const body = event.isBase64Encoded ? Buffer.from(raw, 'base64').toString('utf8') : raw;
  if (Buffer.byteLength(body) > MAX_FORM_BYTES) return new Map();
  const type = header(event, 'content-type');
  if (/^application\/x-www-form-urlencoded\b/iu.test(type)) return new Map(new URLSearchParams(body));
  // The boundary keeps its case: only the media type's name is case-insensitive.
  const boundary = /^multipart\/form-data;.*boundary="?([^";]+)"?/iu.exec(type)?.[1];
  if (!boundary) return new Map();
  const fields = new Map<string, string>();
  for (const part of body.split(`--${boundary}`)) {
    const match = /^\r\nContent-Disposition: form-data; name="([^"]+)"\r\n\r\n([\s\S]*)\r\n$/iu.exec(part);
    if (match?.[1] !== undefined && match[2] !== undefined) fields.set(match[1], match[2]);
  }
  return fields;
};
