import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashOpaqueToken } from '../../lib/auth/opaque-tokens.ts';
import { db } from '../../lib/db/service.ts';
import { MAILER, MAILER_ACTIONS } from '../../infra/stack.ts';
import { ROUTES } from '../../lib/http/routes.ts';
import { TEAM_CLEANUP } from '../../lib/background.ts';
import { invocation } from '../../lib/http/server.ts';
import { addMember, createTeam, freshEmail, signUp, useApi } from '../helpers/api.ts';

/**
 * Least privilege, observed (SECURITY-TESTS K1): DynamoDB Local checks no IAM, so a function that
 * uses an action its role lacks would only fail on AWS. Every request is attributed to the
 * function that sent it (the local server runs each in its own async context), mapped to the IAM
 * actions it needs, and compared with the grants of lib/http/routes.ts, which the stack applies.
 */
const api = useApi();
const used = new Map<string, Set<string>>();
const usedIndexes = new Map<string, Set<string>>();

/** The IAM actions one request needs: a transaction is authorised item by item. */
const actionsOf = (command: string, input: Record<string, unknown>): string[] => {
  if (command === 'TransactWriteItemsCommand') {
    const kinds: Record<string, string> = { Put: 'PutItem', Update: 'UpdateItem', Delete: 'DeleteItem', ConditionCheck: 'ConditionCheckItem' };
    return (input.TransactItems as Record<string, unknown>[]).map((item) => kinds[Object.keys(item)[0] as string] as string);
  }
  if (command === 'TransactGetItemsCommand') return ['GetItem'];
  return [command.replace(/Command$/, '')];
};

beforeAll(() => {
  db().documents.middlewareStack.add(
    (next, context) => (args) => {
      const fn = invocation.getStore()?.functionName;
      if (fn) {
        const input = args.input as Record<string, unknown>;
        for (const action of actionsOf(context.commandName as string, input)) {
          used.set(fn, (used.get(fn) ?? new Set()).add(action));
        }
        if (typeof input.IndexName === 'string') usedIndexes.set(fn, (usedIndexes.get(fn) ?? new Set()).add(input.IndexName));
      }
      return next(args);
    },
    { step: 'initialize', name: 'recordActions' },
  );
});
afterAll(() => db().documents.middlewareStack.remove('recordActions'));

// The mailer and the team cleanup run on the table's stream, as the local server runs them; their requests count too.
let stopPoller: (() => Promise<void> | void) | undefined;
beforeAll(async () => {
  const { startStreamPollers } = await import('../../infra/stream-poller.ts');
  const pollers = await startStreamPollers({
    endpoint: process.env.DYNAMODB_ENDPOINT as string,
    tableName: process.env.TABLE_NAME as string,
    dataDir: process.env.DATA_DIR as string,
  });
  stopPoller = async () => {
    await Promise.all(pollers.map((p) => p.stop()));
  };
});
afterAll(() => stopPoller?.());

describe('IAM grants cover what every function does', () => {
  it('runs every route, rare paths included, within its grants', async () => {
    const owner = await signUp(api);
    const admin = await signUp(api);
    const guest = await signUp(api);
    const decliner = await signUp(api);
    const team = await createTeam(api, owner);
    const adminId = await addMember(api, team.slug, owner, admin, 'MEMBER');
    const call = (method: string, path: string, token?: string, json?: unknown) =>
      api.call(method, path, { ...(token ? { token } : {}), ...(json !== undefined ? { json } : {}) });

    await call('POST', '/api/auth/signin', undefined, { email: owner.email, password: owner.password });
    await call('POST', '/api/auth/signin', undefined, { email: freshEmail('nobody'), password: 'wrong password' });
    await call('GET', '/api/auth/user', owner.token);
    await call('PUT', '/api/auth/user', owner.token, { firstName: 'Owner' });
    await call('GET', '/api/auth/sessions', owner.token);
    await call('GET', '/.well-known/jwks.json');
    await call('GET', '/api/openapi.json');
    await call('GET', '/docs');
    await call('GET', '/docs/start.js');
    await call('GET', '/api/teams', owner.token);
    await call('GET', `/api/teams/${team.slug}`, owner.token);
    await call('PUT', `/api/teams/${team.slug}`, owner.token, { name: 'Moved', slug: `${team.slug}-m` });
    const slug = `${team.slug}-m`;
    await call('GET', `/api/teams/${slug}/members`, owner.token);
    await call('PUT', `/api/teams/${slug}/members/${adminId}`, owner.token, { role: 'OWNER' });
    await call('PUT', `/api/teams/${slug}/members/${adminId}`, owner.token, { role: 'ADMIN' });
    await call('POST', `/api/teams/${slug}/invites`, owner.token, { email: guest.email, role: 'MEMBER' });
    await call('POST', `/api/teams/${slug}/invites`, owner.token, { email: guest.email, role: 'ADMIN' });
    await call('POST', `/api/teams/${slug}/invites`, owner.token, { email: decliner.email, role: 'MEMBER' });
    await call('POST', `/api/teams/${slug}/invites`, owner.token, { email: freshEmail('revoked'), role: 'MEMBER' });
    const invites = (await call('GET', `/api/teams/${slug}/invites`, owner.token)).body.data;
    await call('GET', `/api/teams/${slug}/invites/${invites[0].id}`, owner.token);
    await call('POST', `/api/teams/${slug}/invites/${invites[1].id}/resend`, owner.token);
    await call('DELETE', `/api/teams/${slug}/invites/${invites[2].id}`, owner.token);
    const mine = (await call('GET', '/api/invites', guest.token)).body.data[0];
    await call('GET', `/api/invites/${mine.uuid}`, guest.token);
    await call('POST', `/api/invites/${mine.uuid}/accept`, guest.token);
    const theirs = (await call('GET', '/api/invites', decliner.token)).body.data[0];
    await call('POST', `/api/invites/${theirs.uuid}/decline`, decliner.token);
    await call('DELETE', `/api/teams/${slug}/members/${adminId}`, owner.token);

    // Refresh, then the reuse path that ends the session.
    const rotated = (await call('POST', '/api/auth/refresh', undefined, { refresh_token: guest.refreshToken })).body.data.session;
    await db().entities.refreshToken.patch({ tokenHash: hashOpaqueToken(guest.refreshToken) }).set({ rotatedAt: 0 }).go();
    expect((await call('POST', '/api/auth/refresh', undefined, { refresh_token: guest.refreshToken })).status).toBe(401);
    expect((await call('GET', '/api/auth/user', rotated.access_token)).status).toBe(401);

    // Password change (ends other sessions), session revoke, sign-outs, team deletion.
    const second = (await call('POST', '/api/auth/signin', undefined, { email: owner.email, password: owner.password })).body.data.session;
    const third = (await call('POST', '/api/auth/signin', undefined, { email: owner.email, password: owner.password })).body.data.session;
    const sessions = (await call('GET', '/api/auth/sessions', third.access_token)).body.data;
    await call('DELETE', `/api/auth/sessions/${sessions.find((s: { current: boolean }) => !s.current).id}`, third.access_token);
    await call('PUT', '/api/auth/user', third.access_token, { password: 'a renewed passphrase', currentPassword: owner.password });
    await call('DELETE', `/api/teams/${slug}`, third.access_token);
    await call('POST', '/api/auth/signout?scope=global', third.access_token);
    await call('POST', '/api/auth/signout', decliner.token);
    expect((await call('GET', '/api/auth/user', second.access_token)).status).toBe(401);

    const missing: string[] = [];
    for (const route of ROUTES) {
      // The JWKS is answered from the key cache the earlier requests warmed: it may send nothing.
      // A route granted nothing (the documentation) must send nothing: `missing` catches any request.
      if (route.name !== 'jwks' && route.actions.length > 0) expect(used.has(route.name), `${route.name} was not exercised`).toBe(true);
      for (const action of used.get(route.name) ?? []) {
        if (!(route.actions as readonly string[]).includes(action)) missing.push(`${route.name}: ${action}`);
      }
      for (const index of usedIndexes.get(route.name) ?? []) {
        if (!(route.indexes as readonly string[]).includes(index)) missing.push(`${route.name}: index ${index}`);
      }
    }
    // The mailer has sent the scenario's invitations and decline notice by now (poll, bounded).
    for (let i = 0; i < 100 && !used.get(MAILER)?.has('UpdateItem'); i++) await new Promise((r) => setTimeout(r, 100));
    expect(used.has(MAILER), 'the mailer was not exercised').toBe(true);
    for (const action of used.get(MAILER) ?? []) {
      if (!(MAILER_ACTIONS as readonly string[]).includes(action)) missing.push(`${MAILER}: ${action}`);
    }
    // The deleted team's cleanup has run to its end (it deletes its job last).
    for (let i = 0; i < 100 && !used.get(TEAM_CLEANUP.name)?.has('DeleteItem'); i++) await new Promise((r) => setTimeout(r, 100));
    expect(used.has(TEAM_CLEANUP.name), 'the team cleanup was not exercised').toBe(true);
    for (const action of used.get(TEAM_CLEANUP.name) ?? []) {
      if (!(TEAM_CLEANUP.actions as readonly string[]).includes(action)) missing.push(`${TEAM_CLEANUP.name}: ${action}`);
    }
    for (const index of usedIndexes.get(TEAM_CLEANUP.name) ?? []) {
      if (!(TEAM_CLEANUP.indexes as readonly string[]).includes(index)) missing.push(`${TEAM_CLEANUP.name}: index ${index}`);
    }
    expect(missing, 'used but not granted').toEqual([]);
  });
});
