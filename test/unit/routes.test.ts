import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { FALLBACK, ROUTES, type Route, isIdempotent, matchRoute } from '#lib/http/routes.ts';

describe('route table', () => {
  it('names a handler file for every route and the fallback', () => {
    for (const name of [...ROUTES.map((r) => r.name), FALLBACK]) {
      expect(existsSync(new URL(`../../functions/${name}.ts`, import.meta.url)), name).toBe(true);
    }
  });

  it('grants every authenticated POST what Idempotency-Key records need (a replay reads the session too)', () => {
    const idempotent = ROUTES.filter(isIdempotent);
    expect(idempotent.map((r) => r.name).sort()).toEqual(
      [
        'auth-factors-challenge',
        'auth-signout',
        'auth-verify-resend',
        'invites-accept',
        'invites-bulk',
        'invites-create',
        'invites-decline',
        'invites-resend',
        'teams-create',
        'teams-domains-create',
        'teams-domains-verify',
        'teams-join',
        'teams-join-accept',
        'transfer-accept',
        'transfer-create',
        'transfer-decline',
        'webhooks-create',
        'webhooks-replay',
      ].sort(),
    );
    for (const route of idempotent) {
      expect(route.actions, route.name).toEqual(expect.arrayContaining(['BatchGetItem', 'PutItem', 'UpdateItem', 'DeleteItem']));
    }
  });

  it('never keeps an answer that holds a secret under an Idempotency-Key (a TOTP key, tokens, recovery codes)', () => {
    const secret = ['auth-factors-enrol', 'auth-factors-verify', 'auth-recovery-codes-create', 'auth-recovery-codes-verify'];
    for (const name of secret) expect((ROUTES as readonly Route[]).find((r) => r.name === name)?.secretAnswer, name).toBe(true);
    expect(ROUTES.filter(isIdempotent).filter((r) => secret.includes(r.name))).toEqual([]);
  });

  it('has unique names and unique method + path pairs', () => {
    expect(new Set(ROUTES.map((r) => r.name)).size).toBe(ROUTES.length);
    expect(new Set(ROUTES.map((r) => `${r.method} ${r.path}`)).size).toBe(ROUTES.length);
  });

  it('uses one parameter name per path position under a shared prefix (API Gateway requires it)', () => {
    const names = new Map<string, string>();
    for (const route of ROUTES) {
      const parts = route.path.split('/');
      parts.forEach((part, i) => {
        if (!part.startsWith('{')) return;
        const prefix = parts.slice(0, i).join('/');
        const seen = names.get(prefix);
        expect(seen === undefined || seen === part, `${route.path}: ${part} vs ${seen}`).toBe(true);
        names.set(prefix, part);
      });
    }
  });

  it('matches like API Gateway: literal segments before parameters, 405 with the methods of the path', () => {
    expect(matchRoute('GET', '/api/invites')).toMatchObject({ route: { name: 'my-invites-list' } });
    expect(matchRoute('GET', '/api/invites/0b0e8c4e-0000-4000-8000-000000000000')).toMatchObject({
      route: { name: 'my-invites-get' },
      params: { uuid: '0b0e8c4e-0000-4000-8000-000000000000' },
    });
    expect(matchRoute('POST', '/api/teams/acme/members')).toEqual({ allow: ['GET'] });
    expect(matchRoute('PATCH', '/api/teams/acme')).toEqual({ allow: ['GET', 'PUT', 'DELETE'] });
    expect(matchRoute('GET', '/api/v1/teams')).toBeNull();
    expect(matchRoute('GET', '/api/teams/%E0%A4%A')).toBeNull();
  });
});
