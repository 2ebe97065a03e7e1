import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROUTES, type Route, isIdempotent } from '#lib/http/routes.ts';
import { OPERATIONS } from '#lib/openapi/operations.ts';
import { gotrueCodeOf } from '#lib/http/gotrue-errors.ts';
import { requestOf } from '#lib/http/request-schemas.ts';

/**
 * No declared answer that never happens (issue 22). openapi.json lists each route's error codes:
 * its own (lib/openapi/operations-*.ts) and those of its kind (a body, a token, a path parameter,
 * an Idempotency-Key: lib/openapi/document.ts). test/helpers/openapi.ts notes every answer the api
 * tier gets; when the whole tier has run (`npm test` sets TEST_STATUS_COVERAGE), each route's own
 * codes must have been answered by that route, and each kind's codes by some route of that kind.
 * Left out: what no test can cause on purpose here (500 `internal`, 503 `unavailable` while
 * DynamoDB is down: test/load/background-outage.test.ts; a 409 `conflict` when DynamoDB's transaction
 * conflicts outlast the retries) and API Gateway's own 431.
 */
const UNCAUSED = new Set(['internal', 'unavailable', 'conflict']);

/** The codes a route answers because of its kind, whatever it does. */
const KINDS: { name: string; of: (route: Route) => boolean; codes: string[] }[] = [
  { name: 'JSON answer', of: () => true, codes: ['body_too_large'] },
  { name: 'body', of: (r) => r.body && !('dialect' in r), codes: ['unsupported_media_type', 'invalid_json', 'invalid_body'] },
  { name: 'token', of: (r) => r.auth && !('dialect' in r), codes: ['unauthorized'] },
  { name: 'GoTrue token', of: (r) => r.auth && 'dialect' in r, codes: ['bad_jwt'] },
  { name: 'GoTrue body', of: (r) => r.body && 'dialect' in r, codes: ['validation_failed', 'bad_json'] },
  { name: 'path parameter', of: (r) => r.path.includes('{'), codes: ['not_found'] },
  { name: 'Idempotency-Key', of: isIdempotent, codes: ['idempotency_key_reused', 'idempotency_in_progress'] },
  { name: 'query', of: (r) => requestOf(r.name as keyof typeof OPERATIONS).query !== undefined, codes: ['validation_failed'] },
];

/** A run of some files or tests only (`npm test -- test/api/x.test.ts`, `-t name`): it cannot have caused every answer. */
const filtered = (): boolean =>
  process.argv.slice(2).some((arg) => /\.test\.ts$/.test(arg) || arg === '-t' || arg.startsWith('--testNamePattern'));

export default function setup() {
  if (process.env.TEST_STATUS_COVERAGE !== '1' || filtered()) return undefined;
  const dir = mkdtempSync(join(tmpdir(), 'roster-observed-'));
  process.env.TEST_OBSERVED_DIR = dir;
  return () => {
    const observed = new Set(
      readdirSync(dir).flatMap((file) =>
        readFileSync(join(dir, file), 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((line) => {
            const [route, , code] = line.split(' ');
            return `${route} ${code}`;
          }),
      ),
    );
    rmSync(dir, { recursive: true, force: true });
    const missing: string[] = [];
    for (const route of ROUTES)
      for (const code of OPERATIONS[route.name].errors) {
        // A Supabase-compatible route answers the code in GoTrue's words.
        const answered = 'dialect' in route ? gotrueCodeOf(route.name, code)[1] : code;
        if (!UNCAUSED.has(code) && !observed.has(`${route.name} ${answered}`)) missing.push(`${route.name}: ${code} (${answered})`);
      }
    for (const kind of KINDS) {
      const routes = ROUTES.filter(kind.of).map((r) => r.name);
      for (const code of kind.codes)
        if (!routes.some((name) => observed.has(`${name} ${code}`))) missing.push(`any route with a ${kind.name}: ${code}`);
    }
    if (missing.length > 0)
      throw new Error(
        `openapi.json declares answers no test in test/api/ got (answer each in a test, or stop declaring it):\n  ${missing.join('\n  ')}`,
      );
  };
}
