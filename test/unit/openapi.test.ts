import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { requestOf } from '#lib/http/request-schemas.ts';
import { ROUTES, type Route, type RouteName } from '#lib/http/routes.ts';
import { buildDocument } from '#lib/openapi/document.ts';
import { AUTH_OPERATIONS } from '#lib/openapi/operations-auth.ts';
import { GOTRUE_OPERATIONS } from '#lib/openapi/operations-gotrue.ts';
import { INVITE_OPERATIONS } from '#lib/openapi/operations-invites.ts';
import { MFA_OPERATIONS } from '#lib/openapi/operations-mfa.ts';
import { OAUTH_OPERATIONS } from '#lib/openapi/operations-oauth.ts';
import { DOMAIN_OPERATIONS } from '#lib/openapi/operations-domains.ts';
import { OPERATIONS } from '#lib/openapi/operations.ts';
import { TEAM_OPERATIONS } from '#lib/openapi/operations-teams.ts';

/**
 * openapi.json is generated (`npm run openapi`) and committed, because the API serves it and
 * clients build on it: it must be what the generator makes of the route table today, and the
 * generator must cover every route.
 */
interface Operation {
  operationId: string;
  security: unknown[];
  parameters?: { name: string; in: string; required: boolean }[];
  requestBody?: { content?: Record<string, unknown> };
  responses: Record<string, unknown>;
}
type Document = { paths: Record<string, Record<string, Operation>> };

const built = buildDocument() as Document;
const routes: readonly Route[] = ROUTES;
const operations = Object.entries(built.paths).flatMap(([path, methods]) =>
  Object.entries(methods).map(([method, operation]) => ({ key: `${method.toUpperCase()} ${path}`, operation })),
);
const operationOf = (route: Route): Operation => {
  const operation = built.paths[route.path]?.[route.method.toLowerCase()];
  if (!operation) throw new Error(`${route.name} is not in the document`);
  return operation;
};

describe("the operations' words (lib/openapi/operations-*.ts)", () => {
  it('name each route in one area only: a route in two would be overridden silently by the merge', () => {
    const names = [
      AUTH_OPERATIONS,
      MFA_OPERATIONS,
      OAUTH_OPERATIONS,
      TEAM_OPERATIONS,
      DOMAIN_OPERATIONS,
      INVITE_OPERATIONS,
      GOTRUE_OPERATIONS,
    ].flatMap((area) => Object.keys(area));
    expect(names.filter((name, n) => names.indexOf(name) !== n)).toEqual([]);
    expect(names.toSorted()).toEqual(ROUTES.map((r) => r.name).toSorted());
  });
});

describe('openapi.json', () => {
  it('is the generated document', () => {
    const committed: unknown = JSON.parse(readFileSync(new URL('../../openapi.json', import.meta.url), 'utf8'));
    // JSON's round trip drops what JSON cannot hold, as writing the file does.
    expect(committed, 'openapi.json is not what the generator makes: run `npm run openapi` and commit openapi.json').toEqual(
      JSON.parse(JSON.stringify(built)),
    );
  });

  it('has exactly the operations of the route table', () => {
    expect(operations.map((o) => o.key).sort()).toEqual(routes.map((r) => `${r.method} ${r.path}`).sort());
    expect(operations.map((o) => o.operation.operationId).sort()).toEqual(routes.map((r) => r.name).sort());
  });

  it.each(routes)('$name: request body, path parameters, security, success and 500', (route) => {
    const operation = operationOf(route);
    const hasBody = operation.requestBody?.content?.['application/json'] !== undefined;
    expect(hasBody, 'a JSON requestBody exactly when REQUESTS has a body schema').toBe(
      requestOf(route.name as RouteName).body !== undefined,
    );
    expect(hasBody, 'a JSON requestBody exactly when the route table says the route reads a body').toBe(route.body);
    // A form body (the pages' POST) exactly when its operation describes one.
    expect(operation.requestBody?.content?.['application/x-www-form-urlencoded'] !== undefined).toBe(
      (OPERATIONS[route.name as RouteName] as { form?: unknown }).form !== undefined,
    );
    const inPath = [...route.path.matchAll(/\{(\w+)\}/g)].map(([, name]) => name);
    const documented = (operation.parameters ?? []).filter((p) => p.in === 'path');
    expect(documented.map((p) => p.name)).toEqual(inPath);
    expect(documented.every((p) => p.required)).toBe(true);
    expect(operation.security).toEqual(route.auth ? [{ Token: [] }, { Bearer: [] }] : []);
    expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining([String(route.status), '500']));
  });
});
