import type * as z from 'zod/mini';
import { AppError } from '#lib/core/errors.ts';

const valueAt = (input: unknown, path: readonly PropertyKey[]): unknown =>
  path.reduce<unknown>(
    (value, key) => (value !== null && typeof value === 'object' ? (value as Record<PropertyKey, unknown>)[key] : undefined),
    input,
  );

/** JSON's own type names, as a client would say them. */
const jsonType = (value: unknown): string => (value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value);

/**
 * Parses `input`, or throws the contract's error: a field present with the wrong JSON type is
 * 400 `invalid_body`; a missing field or a broken rule is 422 `validation_failed`, with a
 * message per field either way.
 */
export const validate = <T>(schema: z.ZodMiniType<T>, input: unknown): T => {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const fields: Record<string, string> = {};
  let wrongType = false;
  for (const issue of result.error.issues) {
    const key = issue.path.map(String).join('.') || '(body)';
    const value = valueAt(input, issue.path);
    // The JSON type the field takes: zod says for a wrong type; a wrong value is a string's (enums).
    const expected = issue.code === 'invalid_type' ? issue.expected : 'string';
    const typeMismatch =
      value !== undefined && jsonType(value) !== expected && (issue.code === 'invalid_type' || issue.code === 'invalid_value');
    if (typeMismatch) wrongType = true;
    const missing = value === undefined && issue.code !== 'custom';
    const article = /^[aeiou]/.test(expected) ? 'an' : 'a';
    fields[key] ??= typeMismatch ? `must be ${article} ${expected}, not ${jsonType(value)}` : missing ? 'is required' : issue.message;
  }
  throw new AppError(wrongType ? 'invalid_body' : 'validation_failed', undefined, { fields });
};
