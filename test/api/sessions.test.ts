import { randomUUID, randomUUIDv7 } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { hashOpaqueToken } from '#lib/auth/opaque-tokens.ts';
import { config } from '#lib/core/config.ts';
import { db } from '#lib/db/service.ts';
import { type TestUser, signUp, useApi } from '../helpers/api.ts';

const api = useApi();

const refresh = (refreshToken: string) => api.call('POST', '/api/auth/refresh', { json: { refresh_token: refreshToken } });
const me = (token: string) => api.call('GET', '/api/auth/user', { token });
const signIn = async (user: TestUser) => {
  const res = await api.call('POST', '/api/auth/signin', { json: { email: user.email, password: user.password } });
  return { token: res.body.data.session.access_token as string, refreshToken: res.body.data.session.refresh_token as string };
};

/** The session id an access token carries (its `session_id` claim). */
const sessionOf = (accessToken: string): string =>
  JSON.parse(Buffer.from(accessToken.split('.')[1] as string, 'base64url').toString('utf8')).session_id as string;

/** Moves a rotation into the past, as if the grace window had gone by. */
const ageRotation = (refreshToken: string, ms: number) =>
  db()
    .entities.refreshToken.patch({ tokenHash: hashOpaqueToken(refreshToken) })
    .set({ rotatedAt: Date.now() - ms })
    .go();

describe('POST /api/auth/refresh', () => {
  it('rotates: a new pair for the same user and session; the old refresh token stops working', async () => {
    const user = await signUp(api);
    const res = await refresh(user.refreshToken);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const next = res.body.data.session;
    expect(next.refresh_token).not.toBe(user.refreshToken);
    expect(next.user.id).toBe(user.uuid);
    expect((await me(next.access_token)).status).toBe(200);
    // The first access token belongs to the same session and still works.
    expect((await me(user.token)).status).toBe(200);
    await ageRotation(user.refreshToken, 11_000);
    expect((await refresh(user.refreshToken)).status).toBe(401);
  });

  it('answers a retry within the grace window with exactly the same pair', async () => {
    const user = await signUp(api);
    const first = (await refresh(user.refreshToken)).body.data.session;
    const again = await refresh(user.refreshToken);
    expect(again.status).toBe(200);
    expect(again.body.data.session.refresh_token).toBe(first.refresh_token);
    expect(again.body.data.session.access_token).toBe(first.access_token);
    // The pair keeps working: the retry did not end the session.
    expect((await refresh(first.refresh_token)).status).toBe(200);
  });

  it('gives 20 concurrent refreshes of one token one and the same new pair, and no 5xx', async () => {
    const user = await signUp(api);
    const results = await Promise.all(Array.from({ length: 20 }, () => refresh(user.refreshToken)));
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(new Set(results.map((r) => r.body.data.session.refresh_token)).size).toBe(1);
    expect(new Set(results.map((r) => r.body.data.session.access_token)).size).toBe(1);
    const child = results[0]?.body.data.session.refresh_token as string;
    expect((await refresh(child)).status).toBe(200);
  });

  it(`rotates at most ${config.refreshBurst} times at once per session, then 429 with Retry-After; grace retries do not count`, async () => {
    const user = await signUp(api);
    const other = await signIn(user);
    let current = user.refreshToken;
    let previous = current;
    for (let i = 0; i < config.refreshBurst; i++) {
      const res = await refresh(current);
      expect(res.status, `rotation ${i + 1}`).toBe(200);
      previous = current;
      current = res.body.data.session.refresh_token;
    }
    // A retry of the last rotation inside the grace window is the same pair, not a rotation.
    const retry = await refresh(previous);
    expect(retry.status).toBe(200);
    expect(retry.body.data.session.refresh_token).toBe(current);
    const limited = await refresh(current);
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe('rate_limited');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // The refused token was not rotated: it still works once the bucket refills; other sessions never noticed.
    expect((await refresh(other.refreshToken)).status).toBe(200);
    // As if a minute had gone by: the session's bucket is full again.
    await db()
      .entities.session.patch({ userUuid: user.uuid, sessionId: sessionOf(user.token) })
      .set({ refreshTat: Date.now() })
      .go();
    expect((await refresh(current)).status).toBe(200);
  });

  it('ends the whole session when a rotated token comes back after the grace window', async () => {
    const user = await signUp(api);
    const r1 = (await refresh(user.refreshToken)).body.data.session;
    const r2 = (await refresh(r1.refresh_token)).body.data.session;
    const r3 = (await refresh(r2.refresh_token)).body.data.session;
    await ageRotation(user.refreshToken, 11_000);
    const replay = await refresh(user.refreshToken);
    expect(replay.status).toBe(401);
    expect(replay.headers.get('www-authenticate')).toMatch(/^Token/);
    // Every token of that sign-in is dead: the latest refresh token and every access token.
    expect((await refresh(r3.refresh_token)).status).toBe(401);
    for (const token of [user.token, r1.access_token, r3.access_token]) expect((await me(token)).status).toBe(401);
    // Another sign-in of the same user is untouched.
    const other = await signIn(user);
    expect((await me(other.token)).status).toBe(200);
  });

  it('refuses unknown, malformed and access tokens used as refresh tokens (401 or 422, never 5xx)', async () => {
    const user = await signUp(api);
    expect((await refresh('A'.repeat(43))).status).toBe(401);
    // An access token is longer than a refresh token may be (512 characters): refused before any lookup.
    expect((await refresh(user.token)).status).toBe(422);
    expect((await api.call('POST', '/api/auth/refresh', { json: {} })).status).toBe(422);
    expect((await api.call('POST', '/api/auth/refresh', { json: { refresh_token: 42 } })).status).toBe(400);
    expect((await refresh('x'.repeat(513))).status).toBe(422);
  });

  it('refuses a refresh after the idle timeout or the absolute lifetime', async () => {
    const idle = await signUp(api);
    const session = (
      await db()
        .entities.refreshToken.get({ tokenHash: hashOpaqueToken(idle.refreshToken) })
        .go()
    ).data;
    await db()
      .entities.session.patch({ userUuid: idle.uuid, sessionId: session?.sessionId as string })
      .set({ lastUsedAt: new Date(Date.now() - 8 * 86_400_000).toISOString() })
      .go();
    expect((await refresh(idle.refreshToken)).status).toBe(401);

    const old = await signUp(api);
    const oldSession = (
      await db()
        .entities.refreshToken.get({ tokenHash: hashOpaqueToken(old.refreshToken) })
        .go()
    ).data;
    await db()
      .entities.session.patch({ userUuid: old.uuid, sessionId: oldSession?.sessionId as string })
      .set({ expiresAt: Math.floor(Date.now() / 1000) - 1 })
      .go();
    expect((await refresh(old.refreshToken)).status).toBe(401);
    // Past its absolute end a session's access tokens stop too, even before they expire.
    expect((await me(old.token)).status).toBe(401);
  });
});

describe('sign-out', () => {
  it('ends the current session: its access token is 401 on the very next request, its refresh token too', async () => {
    const user = await signUp(api);
    const other = await signIn(user);
    const res = await api.call('POST', '/api/auth/signout', { token: user.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: {} });
    expect((await me(user.token)).status).toBe(401);
    expect((await api.call('GET', '/api/teams', { token: user.token })).status).toBe(401);
    expect((await refresh(user.refreshToken)).status).toBe(401);
    expect((await api.call('POST', '/api/auth/signout', { token: user.token })).status).toBe(401);
    // The other session goes on.
    expect((await me(other.token)).status).toBe(200);
  });

  it('with ?scope=global ends every session of the user', async () => {
    const user = await signUp(api);
    const second = await signIn(user);
    const third = await signIn(user);
    expect((await api.call('POST', '/api/auth/signout?scope=global', { token: second.token })).status).toBe(200);
    for (const token of [user.token, second.token, third.token]) expect((await me(token)).status).toBe(401);
    for (const r of [user.refreshToken, second.refreshToken, third.refreshToken]) expect((await refresh(r)).status).toBe(401);
  });

  it('refuses an unknown scope (422)', async () => {
    const user = await signUp(api);
    expect((await api.call('POST', '/api/auth/signout?scope=everything', { token: user.token })).status).toBe(422);
  });
});

describe('sessions', () => {
  it('lists the caller’s sessions with exactly one current, and ends another one', async () => {
    const user = await signUp(api);
    const second = await signIn(user);
    const list = await api.call('GET', '/api/auth/sessions', { token: second.token });
    expect(list.status).toBe(200);
    expect(list.body.data).toHaveLength(2);
    for (const s of list.body.data) {
      expect(Object.keys(s).sort()).toEqual(['createdAt', 'current', 'id', 'ip', 'lastUsedAt', 'userAgent']);
    }
    expect(list.body.data.filter((s: { current: boolean }) => s.current)).toHaveLength(1);
    const first = list.body.data.find((s: { current: boolean }) => !s.current);

    const del = await api.call('DELETE', `/api/auth/sessions/${first.id}`, { token: second.token });
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ data: {} });
    expect((await me(user.token)).status).toBe(401);
    expect((await me(second.token)).status).toBe(200);
    expect((await api.call('GET', '/api/auth/sessions', { token: second.token })).body.data).toHaveLength(1);
  });

  it('never touches another user’s session (404) and refuses malformed ids (404)', async () => {
    const [a, b] = [await signUp(api), await signUp(api)];
    const theirs = (await api.call('GET', '/api/auth/sessions', { token: b.token })).body.data[0].id;
    expect((await api.call('DELETE', `/api/auth/sessions/${theirs}`, { token: a.token })).status).toBe(404);
    expect((await me(b.token)).status).toBe(200);
    expect((await api.call('DELETE', '/api/auth/sessions/not-a-uuid', { token: a.token })).status).toBe(404);
    const mine = (await api.call('GET', '/api/auth/sessions', { token: a.token })).body.data;
    expect(mine.map((s: { id: string }) => s.id)).not.toContain(theirs);
  });

  it('ending the current session by id works like sign-out', async () => {
    const user = await signUp(api);
    const current = (await api.call('GET', '/api/auth/sessions', { token: user.token })).body.data[0].id;
    expect((await api.call('DELETE', `/api/auth/sessions/${current}`, { token: user.token })).status).toBe(200);
    expect((await me(user.token)).status).toBe(401);
  });
});

/** Every page of the caller's sessions, following `Link`; answers the pages' ids and sizes. */
const allPages = async (token: string, limit: number) => {
  const pages: string[][] = [];
  let path: string | null = `/api/auth/sessions?limit=${limit}`;
  while (path) {
    const res = await api.call('GET', path, { token });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['data']);
    pages.push(res.body.data.map((s: { id: string }) => s.id));
    const link = res.headers.get('link');
    const next = link ? new URL(/^<([^>]+)>; rel="next"$/.exec(link)?.[1] as string) : null;
    path = next ? `${next.pathname}${next.search}` : null;
  }
  return pages;
};

/** Writes sessions of `userUuid` directly (for counts that take long to reach by signing in). */
const seedSessions = (userUuid: string, sessions: { sessionId: string; createdAt: string }[]) => {
  const expiresAt = Math.floor(Date.now() / 1000) + 86_400;
  return db()
    .entities.session.put(sessions.map((s) => ({ ...s, userUuid, lastUsedAt: s.createdAt, expiresAt, ttl: expiresAt })))
    .go();
};

describe('sessions: paged, oldest first, capped', () => {
  it('pages with limit and cursor (Link header), in creation order, ids being UUIDv7', async () => {
    const user = await signUp(api);
    const later = [];
    for (let i = 0; i < 4; i++) later.push(await signIn(user));
    const everything = (await api.call('GET', '/api/auth/sessions', { token: user.token })).body.data as {
      id: string;
      createdAt: string;
      current: boolean;
    }[];
    expect(everything).toHaveLength(5);
    expect(everything.map((s) => s.createdAt)).toEqual(everything.map((s) => s.createdAt).sort());
    for (const s of everything) expect(s.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(everything[0]?.current).toBe(true);
    const pages = await allPages(user.token, 2);
    expect(pages.map((p) => p.length)).toEqual([2, 2, 1]);
    expect(pages.flat()).toEqual(everything.map((s) => s.id));
    // An id from the list works as the path parameter (a UUIDv7 is a UUID).
    expect((await api.call('DELETE', `/api/auth/sessions/${everything[4]?.id}`, { token: user.token })).status).toBe(200);
    expect((await me(later[3]?.token as string)).status).toBe(401);
  });

  it('refuses a bad limit or cursor (422)', async () => {
    const user = await signUp(api);
    for (const query of ['limit=0', 'limit=1001', 'limit=x', 'cursor=bad!']) {
      const res = await api.call('GET', `/api/auth/sessions?${query}`, { token: user.token });
      expect(res.status, query).toBe(422);
    }
    const forged = Buffer.from(JSON.stringify({ pk: 'x', sk: 'y', other: 'z' })).toString('base64url');
    expect((await api.call('GET', `/api/auth/sessions?cursor=${forged}`, { token: user.token })).status).toBe(422);
  });

  it(`keeps at most ${config.maxSessionsPerUser} sessions: signing in past the cap ends the oldest, older v4 ids by their creation time`, async () => {
    const user = await signUp(api);
    const cap = config.maxSessionsPerUser;
    const start = Date.now() - 86_400_000;
    // A session from before UUIDv7 ids (a random v4, which sorts anywhere), the oldest of all, and
    // enough time-ordered ones to reach the cap with the sign-up's session.
    const legacy = { sessionId: randomUUID(), createdAt: new Date(start).toISOString() };
    const seeded = Array.from({ length: cap - 2 }, (_, i) => ({
      sessionId: randomUUIDv7(),
      createdAt: new Date(start + 1000 * (i + 1)).toISOString(),
    }));
    await seedSessions(user.uuid, [legacy, ...seeded]);
    expect((await allPages(user.token, 1000)).flat()).toHaveLength(cap);

    await signIn(user);
    let ids = (await allPages(user.token, 1000)).flat();
    expect(ids).toHaveLength(cap);
    expect(ids).not.toContain(legacy.sessionId);
    expect(ids).toContain(seeded[0]?.sessionId);

    const newest = await signIn(user);
    ids = (await allPages(user.token, 1000)).flat();
    expect(ids).toHaveLength(cap);
    expect(ids).not.toContain(seeded[0]?.sessionId);
    expect((await me(user.token)).status).toBe(200);
    expect((await me(newest.token)).status).toBe(200);
  });

  it('a global sign-out ends every one of a full set of sessions at once', async () => {
    const user = await signUp(api);
    const start = Date.now() - 3_600_000;
    await seedSessions(
      user.uuid,
      Array.from({ length: config.maxSessionsPerUser - 1 }, (_, i) => ({
        sessionId: randomUUIDv7(),
        createdAt: new Date(start + i).toISOString(),
      })),
    );
    const other = await signIn(user);
    expect((await api.call('POST', '/api/auth/signout?scope=global', { token: user.token })).status).toBe(200);
    expect((await me(other.token)).status).toBe(401);
    const left = await db().entities.session.query.primary({ userUuid: user.uuid }).go({ consistent: true, pages: 'all' });
    expect(left.data).toEqual([]);
  });
});

describe('PUT /api/auth/user', () => {
  it('changes names', async () => {
    const user = await signUp(api);
    const res = await api.call('PUT', '/api/auth/user', { token: user.token, json: { firstName: ' Grace ', lastName: 'Hopper' } });
    expect(res.status).toBe(200);
    expect(res.body.data.user_metadata).toEqual({ firstName: 'Grace', lastName: 'Hopper' });
    expect((await me(user.token)).body.data.user_metadata).toEqual({ firstName: 'Grace', lastName: 'Hopper' });
  });

  it('changes the password with the current one, ending every other session but this one', async () => {
    const user = await signUp(api);
    const other = await signIn(user);
    const res = await api.call('PUT', '/api/auth/user', {
      token: user.token,
      json: { password: 'a brand new passphrase', currentPassword: user.password },
    });
    expect(res.status).toBe(200);
    expect((await me(user.token)).status).toBe(200);
    expect((await me(other.token)).status).toBe(401);
    expect((await refresh(other.refreshToken)).status).toBe(401);
    const old = await api.call('POST', '/api/auth/signin', { json: { email: user.email, password: user.password } });
    expect(old.status).toBe(401);
    const fresh = await api.call('POST', '/api/auth/signin', { json: { email: user.email, password: 'a brand new passphrase' } });
    expect(fresh.status).toBe(200);
  });

  it('leaves no session opened with the old password, even by sign-ins racing the change', async () => {
    const user = await signUp(api);
    const [change, ...signIns] = await Promise.all([
      api.call('PUT', '/api/auth/user', {
        token: user.token,
        json: { password: 'a raced new passphrase', currentPassword: user.password },
      }),
      ...Array.from({ length: 4 }, () => api.call('POST', '/api/auth/signin', { json: { email: user.email, password: user.password } })),
    ]);
    expect(change?.status).toBe(200);
    for (const res of signIns) {
      expect([200, 401, 429]).toContain(res.status);
      if (res.status === 200) expect((await me(res.body.data.session.access_token)).status).toBe(401);
    }
    expect((await me(user.token)).status).toBe(200);
  });

  it('refuses a password change without or with a wrong current password (422), changing nothing', async () => {
    const user = await signUp(api);
    const without = await api.call('PUT', '/api/auth/user', { token: user.token, json: { password: 'another new passphrase' } });
    expect(without.status).toBe(422);
    expect(without.body.error.fields.currentPassword).toBeDefined();
    const wrong = await api.call('PUT', '/api/auth/user', {
      token: user.token,
      json: { password: 'another new passphrase', currentPassword: 'not my password' },
    });
    expect(wrong.status).toBe(422);
    expect(wrong.body.error.fields.currentPassword).toBe('is not your current password');
    expect((await api.call('POST', '/api/auth/signin', { json: { email: user.email, password: user.password } })).status).toBe(200);
  });

  it('refuses an empty change and bad names (422)', async () => {
    const user = await signUp(api);
    expect((await api.call('PUT', '/api/auth/user', { token: user.token, json: {} })).status).toBe(422);
    expect((await api.call('PUT', '/api/auth/user', { token: user.token, json: { firstName: '' } })).status).toBe(422);
    expect((await api.call('PUT', '/api/auth/user', { token: user.token, json: { lastName: 'x'.repeat(101) } })).status).toBe(422);
  });
});
