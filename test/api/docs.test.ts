import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { useApi } from '../helpers/api.ts';

/** The document and its reference page, served by Roster itself to anyone, without a token. */
const api = useApi();

const swaggerUi = (file: string): Buffer => readFileSync(new URL(`../../node_modules/swagger-ui-dist/${file}`, import.meta.url));

describe('GET /api/openapi.json', () => {
  it('answers the committed document as JSON', async () => {
    const res = await api.call('GET', '/api/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(res.body).toEqual(JSON.parse(readFileSync(new URL('../../openapi.json', import.meta.url), 'utf8')));
  });
});

describe('GET /docs', () => {
  it('answers the page, under a policy that allows only our own files', async () => {
    const res = await api.call('GET', '/docs');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('content-security-policy')).toMatch(/default-src 'none'.*script-src 'self'(;|$)/);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    for (const file of ['swagger-ui-bundle.js', 'swagger-ui.css', 'start.js']) expect(res.body).toContain(`"${file}"`);
  });

  it('needs no token and ignores a bad one', async () => {
    expect((await api.call('GET', '/docs', { token: 'not a token' })).status).toBe(200);
    expect((await api.call('GET', '/api/openapi.json', { token: 'not a token' })).status).toBe(200);
  });

  it.each([
    ['swagger-ui-bundle.js', 'text/javascript; charset=utf-8'],
    ['swagger-ui.css', 'text/css; charset=utf-8'],
  ])('answers %s as swagger-ui-dist has it', async (file, type) => {
    const res = await api.call('GET', `/docs/${file}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe(type);
    // Compared as bytes, not as a (megabyte) diff.
    expect(Buffer.from(res.body, 'utf8').equals(swaggerUi(file))).toBe(true);
  });

  it('answers start.js, which loads the served document', async () => {
    const res = await api.call('GET', '/docs/start.js');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(res.body).toContain("'../api/openapi.json'");
  });

  it.each(['/docs/evil.js', '/docs/..%2Fpackage.json', '/docs/package.json', '/docs/swagger-ui-bundle.js.map', '/docs/index.html'])(
    'answers %s with 404 in the envelope',
    async (path) => {
      const res = await api.call('GET', path);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: { code: 'not_found', message: expect.any(String) } });
    },
  );

  it.each(['/docs', '/docs/start.js', '/api/openapi.json'])('answers POST %s with 405 and Allow: GET', async (path) => {
    const res = await api.call('POST', path, { json: {} });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET');
    expect(res.body.error.code).toBe('method_not_allowed');
  });
});
