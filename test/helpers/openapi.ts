import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ErrorObject, ValidateFunction } from 'ajv';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { STATUS } from '#lib/core/errors.ts';
import { matchRoute } from '#lib/http/routes.ts';
import { errorEnvelope } from '#lib/wire/responses.ts';
import committed from '#openapi.json' with { type: 'json' };

/**
 * Checks every answer the HTTP suite gets against openapi.json, the document the API serves: the
 * status must be documented for the operation, a JSON body must match the documented schema, and
 * the API's own headers must be where the document says. An answer the document does not describe
 * fails the test that received it, whatever that test asserts.
 */
interface HeaderObject {
  required: boolean;
  schema: { type: string };
}
interface ResponseObject {
  headers?: Record<string, unknown>;
  content?: Record<string, unknown>;
}
interface OperationObject {
  operationId: string;
  responses: Record<string, ResponseObject | { $ref: string }>;
}
interface OpenApi {
  paths: Record<string, Record<string, OperationObject>>;
  components: { headers: Record<string, HeaderObject>; responses: Record<string, ResponseObject> };
}

const document = committed as unknown as OpenApi;
const DOCUMENT_ID = 'https://roster.test/openapi.json';

// CommonJS packages: under NodeNext their default export is the module object.
const ajv = new Ajv2020.default({ allErrors: true });
addFormats.default(ajv);
// The document is added whole so that `#/components/…` references resolve within it; its own
// top-level fields are inert keywords to Ajv. The schemas inside are compiled (strictly) when first needed.
ajv.addVocabulary(Object.keys(document));
ajv.addSchema(document, DOCUMENT_ID);

const validators = new Map<string, ValidateFunction>();
const validator = (...pointer: string[]): ValidateFunction => {
  const ref = `${DOCUMENT_ID}#/${pointer.map((p) => p.replaceAll('~', '~0').replaceAll('/', '~1')).join('/')}`;
  let validate = validators.get(ref);
  if (!validate) {
    validate = ajv.getSchema(ref);
    if (!validate) throw new Error(`openapi.json has no schema at ${ref}`);
    validators.set(ref, validate);
  }
  return validate;
};

/** Ajv's errors with what its text leaves out: the property that should not be there. */
const explain = (errors: ErrorObject[] | null | undefined): string =>
  (errors ?? [])
    .map(({ instancePath, message, params }) => {
      const extra = 'additionalProperty' in params ? ` (${String(params.additionalProperty)})` : '';
      return `${instancePath || '/'} ${message ?? 'is invalid'}${extra}`;
    })
    .join('; ');

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

const parse = (text: string): { ok: true; value: unknown } | { ok: false } => {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
};

const mediaType = (answer: Answer): string => answer.headers.get('content-type')?.split(';')[0]?.trim() ?? '(none)';

/**
 * The API's own headers (components.headers): required ones present, none where undocumented, values as specified.
 * `optional` names those a response lists inline as not required (Retry-After on a 409 that only some of its codes send).
 */
const headerProblems = (answer: Answer, documented: readonly string[], optional: readonly string[] = []): string[] =>
  Object.entries(document.components.headers).flatMap(([name, { required, schema }]) => {
    const value = answer.headers.get(name);
    const listed = documented.includes(name);
    if (value === null) return listed && required && !optional.includes(name) ? [`header ${name} is missing`] : [];
    if (!listed) return [`header ${name} is not documented for this answer`];
    const typed = schema.type === 'integer' ? Number(value) : value;
    const validate = validator('components', 'headers', name, 'schema');
    return validate(typed) ? [] : [`header ${name}: ${JSON.stringify(value)} ${explain(validate.errors)}`];
  });

/** 404 for no route and 405 with `Allow` for another method: the envelope the info section describes. */
const fallbackProblems = (allow: string[] | null, answer: Answer): string[] => {
  const code = allow ? 'method_not_allowed' : 'not_found';
  const problems = headerProblems(answer, ['X-Request-Id', 'Cache-Control']);
  if (answer.status !== STATUS[code]) problems.push(`no route answers this, so it must be ${STATUS[code]} ${code}`);
  if (allow && answer.headers.get('allow') !== allow.join(', ')) problems.push(`Allow must be ${allow.join(', ')}`);
  const body = parse(answer.text);
  if (mediaType(answer) !== 'application/json' || !body.ok || !errorEnvelope([code]).safeParse(body.value).success) {
    problems.push(`the body must be the ${code} error envelope, as JSON`);
  }
  return problems;
};

/**
 * Notes each documented answer (route, status, error code) for test/status-coverage.ts, which
 * fails `npm test` when the document declares an answer no test ever got.
 */
const observe = (route: string, status: string, answer: Answer): void => {
  const dir = process.env.TEST_OBSERVED_DIR;
  if (!dir) return;
  const body = parse(answer.text);
  // The contract's `error.code`, or GoTrue's top-level `code` on the Supabase-compatible routes.
  const value = body.ok ? (body.value as { error?: { code?: unknown }; code?: unknown } | null) : undefined;
  const code = value?.error?.code ?? (typeof value?.code === 'string' ? value.code : undefined);
  appendFileSync(join(dir, `${process.pid}.txt`), `${route} ${status} ${typeof code === 'string' ? code : '-'}\n`);
};

const problemsOf = (method: string, pathname: string, answer: Answer): string[] => {
  const match = matchRoute(method, pathname);
  if (!match || 'allow' in match) return fallbackProblems(match?.allow ?? null, answer);
  const { route } = match;
  const operation = document.paths[route.path]?.[method.toLowerCase()];
  if (!operation) return [`${route.name} (${route.method} ${route.path}) is not in openapi.json: run \`npm run openapi\``];
  const status = String(answer.status);
  const listed = operation.responses[status];
  const response = listed && '$ref' in listed ? document.components.responses[listed.$ref.split('/').pop() as string] : listed;
  if (!response)
    return [`status ${status} is not documented for ${operation.operationId} (documented: ${Object.keys(operation.responses).join(', ')})`];
  observe(route.name, status, answer);
  const listedHeaders = Object.entries(response.headers ?? {});
  const optional = listedHeaders
    .filter(([, h]) => typeof h === 'object' && h !== null && !('$ref' in h) && (h as { required?: boolean }).required === false)
    .map(([name]) => name);
  const problems = headerProblems(answer, Object.keys(response.headers ?? {}), optional);
  // No content: the document promises nothing about the body (API Gateway's own answers).
  const { content } = response;
  if (!content) return problems;
  const type = mediaType(answer);
  if (!(type in content)) return [...problems, `content type ${type} is not documented (documented: ${Object.keys(content).join(', ')})`];
  // Other media than JSON (the docs page and its assets) are checked by type only.
  if (type !== 'application/json') return problems;
  const body = parse(answer.text);
  if (!body.ok) return [...problems, 'the body is not JSON'];
  const validate = validator('paths', route.path, method.toLowerCase(), 'responses', status, 'content', type, 'schema');
  if (!validate(body.value)) problems.push(`the body does not match the documented schema: ${explain(validate.errors)}`);
  return problems;
};

/** Throws, saying why, unless `answer` to `method` on `pathname` is one openapi.json documents. */
export const expectDocumented = (method: string, pathname: string, answer: Answer): void => {
  const problems = problemsOf(method, pathname, answer);
  if (problems.length === 0) return;
  throw new Error(
    `${method} ${pathname} answered ${answer.status}, not as openapi.json says:\n  - ${problems.join('\n  - ')}\n  body: ${answer.text.slice(0, 1000)}`,
  );
};
