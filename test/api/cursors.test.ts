import { describe, expect, it } from 'vitest';
import { config } from '#lib/core/config.ts';
import { createDocumentClient } from '#lib/db/client.ts';
import { openCursor, sealCursor } from '#lib/db/cursors.ts';
import { CURSOR_KEY_ITEM } from '#lib/db/entities/cursor-key.ts';
import { createDb, db } from '#lib/db/service.ts';
import { type TestUser, addMember, createTeam, freshEmail, signUp, useApi } from '../helpers/api.ts';

/**
 * Opaque list cursors (lib/db/cursors.ts): sealed with the deployment's key and bound to the list
 * that issued them, through the real API on DynamoDB Local.
 */
const api = useApi();

const UUID = /[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}/i;

/** The cursor of the first page's `Link`, for `limit=1`. */
const cursorOf = async (path: string, user: TestUser): Promise<string> => {
  const res = await api.call('GET', `${path}?limit=1`, { token: user.token });
  expect(res.status).toBe(200);
  const link = res.headers.get('link');
  expect(link, path).not.toBeNull();
  return new URL(/<([^>]+)>/.exec(link as string)?.[1] as string).searchParams.get('cursor') as string;
};

/** A second session, so that the sessions list has a next page. */
const signIn = async (user: TestUser) => {
  const res = await api.call('POST', '/api/auth/signin', { json: { email: user.email, password: user.password } });
  expect(res.status).toBe(200);
};

const refused = async (path: string, user: TestUser, cursor: string) => {
  const res = await api.call('GET', `${path}?cursor=${encodeURIComponent(cursor)}`, { token: user.token });
  expect(res.status, `${path} ${cursor.slice(0, 16)}`).toBe(422);
  expect(res.body.error.code).toBe('validation_failed');
  expect(Object.keys(res.body.error.fields)).toEqual(['cursor']);
};

describe('list cursors are opaque and bound to their list', () => {
  it('shows no key, id or UUID, and still pages every item once', async () => {
    const owner = await signUp(api);
    const { slug } = await createTeam(api, owner);
    const members = [await signUp(api), await signUp(api), await signUp(api)];
    for (const m of members) await addMember(api, slug, owner, m, 'MEMBER');
    const cursor = await cursorOf(`/api/teams/${slug}/members`, owner);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(cursor.length).toBeLessThan(2048);
    const bytes = Buffer.from(cursor, 'base64url').toString('latin1');
    expect(bytes).not.toMatch(UUID);
    expect(cursor).not.toMatch(UUID);
    expect(bytes).not.toMatch(/roster|"pk":|"sk":/);
    for (const m of [owner, ...members]) expect(bytes).not.toContain(m.uuid);

    const seen: string[] = [];
    for (let next: string | null = `/api/teams/${slug}/members?limit=1`; next;) {
      const res = await api.call('GET', next, { token: owner.token });
      seen.push(...res.body.data.map((m: { email: string }) => m.email));
      const link = res.headers.get('link');
      const url = link ? new URL(/<([^>]+)>/.exec(link)?.[1] as string) : null;
      next = url ? url.pathname + url.search : null;
    }
    expect(seen).toEqual([owner, ...members].map((u) => u.email));
  });

  it('refuses a tampered cursor, random base64 and a truncated one with 422', async () => {
    const owner = await signUp(api);
    const { slug } = await createTeam(api, owner);
    await addMember(api, slug, owner, await signUp(api), 'MEMBER');
    const path = `/api/teams/${slug}/members`;
    const cursor = await cursorOf(path, owner);
    const bytes = Buffer.from(cursor, 'base64url');
    for (const at of [0, 12, bytes.length >> 1, bytes.length - 1]) {
      const tampered = Buffer.from(bytes);
      tampered[at] = (tampered[at] as number) ^ 1;
      await refused(path, owner, tampered.toString('base64url'));
    }
    await refused(path, owner, cursor.slice(0, -2));
    await refused(path, owner, Buffer.from(Array.from({ length: bytes.length }, (_, i) => (i * 37) & 0xff)).toString('base64url'));
    await refused(path, owner, Buffer.from('{"pk":"x","sk":"y"}').toString('base64url'));
  });

  it("refuses a cursor of another team's member list, of another list of the same team, and another user's", async () => {
    const owner = await signUp(api);
    const other = await signUp(api);
    const a = await createTeam(api, owner);
    const b = await createTeam(api, owner);
    await createTeam(api, other);
    await createTeam(api, other);
    for (const team of [a, b]) {
      await addMember(api, team.slug, owner, await signUp(api), 'MEMBER');
      for (let i = 0; i < 2; i++)
        await api.call('POST', `/api/teams/${team.slug}/invites`, { token: owner.token, json: { email: freshEmail(), role: 'MEMBER' } });
    }
    await signIn(owner);
    await signIn(other);

    // Another team's member list, to a caller who is a member of both.
    await refused(`/api/teams/${a.slug}/members`, owner, await cursorOf(`/api/teams/${b.slug}/members`, owner));
    // The same team's invites, and its member list's cursor on its invites.
    await refused(`/api/teams/${a.slug}/members`, owner, await cursorOf(`/api/teams/${a.slug}/invites`, owner));
    await refused(`/api/teams/${a.slug}/invites`, owner, await cursorOf(`/api/teams/${a.slug}/members`, owner));
    // Another user's teams and sessions.
    await refused('/api/teams', owner, await cursorOf('/api/teams', other));
    await refused('/api/auth/sessions', owner, await cursorOf('/api/auth/sessions', other));
    // The same user's other list.
    await refused('/api/auth/sessions', owner, await cursorOf('/api/teams', owner));
    // Each is good for its own list.
    const own = await cursorOf('/api/auth/sessions', other);
    expect((await api.call('GET', `/api/auth/sessions?cursor=${own}`, { token: other.token })).status).toBe(200);
  });

  it("refuses another user's cursor of my invites", async () => {
    const owner = await signUp(api);
    const guests = [await signUp(api), await signUp(api)];
    for (let i = 0; i < 2; i++) {
      const { slug } = await createTeam(api, owner);
      for (const g of guests)
        await api.call('POST', `/api/teams/${slug}/invites`, { token: owner.token, json: { email: g.email, role: 'MEMBER' } });
    }
    await refused('/api/invites', guests[0] as TestUser, await cursorOf('/api/invites', guests[1] as TestUser));
  });
});

describe('the cursor key item', () => {
  it('is one item: containers racing to create it agree on the key', async () => {
    // A fresh table's state, as far as the item goes; each Db stands for a cold container.
    await db().entities.cursorKey.delete(CURSOR_KEY_ITEM).go();
    const containers = Array.from({ length: 6 }, () => createDb(createDocumentClient(), config.tableName));
    const startKey = Buffer.from('{"pk":"p","sk":"s"}').toString('base64url');
    const sealed = await Promise.all(containers.map((c) => sealCursor(c, 'list', startKey)));
    for (const c of containers) {
      for (const cursor of sealed) expect(await openCursor(c, 'list', cursor)).toBe(startKey);
      expect(await openCursor(c, 'another list', sealed[0] as string)).toBeUndefined();
    }
    const { data } = await db().entities.cursorKey.get(CURSOR_KEY_ITEM).go({ consistent: true });
    expect(Buffer.from(data?.key as string, 'base64url')).toHaveLength(32);
  });
});
