/**
 * `Idempotency-Key` on the authenticated POSTs (lib/http/idempotency-store.ts, docs/idempotency.md), through
 * the local server against DynamoDB Local: replays, refusals, what is kept and what is not, the
 * claim's take-over rules, and twenty identical invites racing under one key.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { db } from '#lib/db/service.ts';
import { IDEMPOTENCY_WINDOW_MS, claimKey, fingerprintOf, releaseKey, settleKey } from '#lib/http/idempotency-store.ts';
import { type Reply, type TestUser, createTeam, freshEmail, freshSlug, signUp, useApi } from '../helpers/api.ts';

const api = useApi();

const withKey = (key: string) => ({ 'idempotency-key': key });

const invite = (by: TestUser, slug: string, email: string, key: string, role = 'MEMBER') =>
  api.call('POST', `/api/teams/${slug}/invites`, { token: by.token, json: { email, role }, headers: withKey(key) });

const pendingUuid = async (user: TestUser, slug: string): Promise<string> => {
  const mine = await api.call('GET', '/api/invites', { token: user.token });
  return mine.body.data.find((i: { team: { slug: string } }) => i.team.slug === slug).uuid;
};

const messagesFor = async (inviteUuid: string) =>
  (
    await db()
      .entities.outboxMessage.scan.where((a, op) => op.eq(a.inviteUuid, inviteUuid))
      .go()
  ).data;

const code = (r: Reply): string | undefined => r.body?.error?.code;

describe('Idempotency-Key', () => {
  it('answers a retry with the first answer, marked as replayed, and acts once', async () => {
    const owner = await signUp(api, 'owner');
    const slug = freshSlug();
    const key = randomUUID();
    const body = { name: 'Replayed', slug };
    const first = await api.call('POST', '/api/teams', { token: owner.token, json: body, headers: withKey(key) });
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const again = await api.call('POST', '/api/teams', { token: owner.token, json: body, headers: withKey(key) });
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    // Its own request id, not the first one's.
    expect(again.headers.get('x-request-id')).not.toBe(first.headers.get('x-request-id'));
    // Same body, spelled differently: the same request.
    const respaced = await api.call('POST', '/api/teams', {
      token: owner.token,
      raw: JSON.stringify(body, null, 2),
      headers: { ...withKey(key), 'content-type': 'application/json' },
    });
    expect(respaced.status).toBe(201);
    expect(respaced.headers.get('idempotent-replayed')).toBe('true');
    // Without the key, the same body is a new request: the slug is taken now.
    expect(code(await api.call('POST', '/api/teams', { token: owner.token, json: body }))).toBe('slug_taken');
  });

  it('refuses the key with another body or on another route (422 idempotency_key_reused)', async () => {
    const owner = await signUp(api, 'owner');
    const team = await createTeam(api, owner);
    const key = randomUUID();
    const email = freshEmail('guest');
    expect((await invite(owner, team.slug, email, key)).status).toBe(201);
    const other = await invite(owner, team.slug, freshEmail('other'), key);
    expect(other.status).toBe(422);
    expect(code(other)).toBe('idempotency_key_reused');
    const elsewhere = await api.call('POST', '/api/teams', {
      token: owner.token,
      json: { name: 'X', slug: freshSlug() },
      headers: withKey(key),
    });
    expect(code(elsewhere)).toBe('idempotency_key_reused');
    const first = { name: 'Query', slug: freshSlug() };
    const queryKey = randomUUID();
    expect((await api.call('POST', '/api/teams', { token: owner.token, json: first, headers: withKey(queryKey) })).status).toBe(201);
    const withQuery = await api.call('POST', '/api/teams?again=1', { token: owner.token, json: first, headers: withKey(queryKey) });
    expect(code(withQuery)).toBe('idempotency_key_reused');
    const otherTeam = await createTeam(api, owner);
    expect(code(await invite(owner, otherTeam.slug, email, key))).toBe('idempotency_key_reused');
  });

  it('keeps keys per user: the same key from another user is theirs alone', async () => {
    const [ann, bob] = [await signUp(api, 'ann'), await signUp(api, 'bob')];
    const key = 'shared-key-1';
    const slugs = [freshSlug(), freshSlug()];
    const a = await api.call('POST', '/api/teams', { token: ann.token, json: { name: 'A', slug: slugs[0] }, headers: withKey(key) });
    const b = await api.call('POST', '/api/teams', { token: bob.token, json: { name: 'B', slug: slugs[1] }, headers: withKey(key) });
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(b.headers.get('idempotent-replayed')).toBeNull();
    expect(b.body.data.slug).toBe(slugs[1]);
  });

  it('checks the header: 1 to 255 printable ASCII characters, else 422 on fields["Idempotency-Key"]', async () => {
    const owner = await signUp(api, 'owner');
    for (const bad of ['x'.repeat(256), 'tab\there', 'é-key']) {
      const res = await api.call('POST', '/api/teams', {
        token: owner.token,
        json: { name: 'X', slug: freshSlug() },
        headers: withKey(bad),
      });
      expect(res.status, bad).toBe(422);
      expect(res.body.error.fields).toEqual({ 'Idempotency-Key': expect.any(String) });
    }
    const longest = await api.call('POST', '/api/teams', {
      token: owner.token,
      json: { name: 'X', slug: freshSlug() },
      headers: withKey('k'.repeat(255)),
    });
    expect(longest.status).toBe(201);
  });

  it('replays a kept 4xx, and never answers a token that does not verify', async () => {
    const owner = await signUp(api, 'owner');
    const team = await createTeam(api, owner);
    const key = randomUUID();
    const taken = { name: 'Taken', slug: team.slug };
    const first = await api.call('POST', '/api/teams', { token: owner.token, json: taken, headers: withKey(key) });
    expect(code(first)).toBe('slug_taken');
    const again = await api.call('POST', '/api/teams', { token: owner.token, json: taken, headers: withKey(key) });
    expect(again.status).toBe(409);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const forged = await api.call('POST', '/api/teams', { token: `${owner.token.slice(0, -4)}AAAA`, json: taken, headers: withKey(key) });
    expect(forged.status).toBe(401);
  });

  it('does not keep a 401: after signing out, the key runs again for a new session', async () => {
    const user = await signUp(api, 'user');
    const slug = freshSlug();
    const key = randomUUID();
    const body = { name: 'After sign-out', slug };
    expect((await api.call('POST', '/api/auth/signout', { token: user.token })).status).toBe(200);
    const refused = await api.call('POST', '/api/teams', { token: user.token, json: body, headers: withKey(key) });
    expect(refused.status).toBe(401);
    const signedIn = await api.call('POST', '/api/auth/signin', { json: { email: user.email, password: user.password } });
    const token = signedIn.body.data.session.access_token as string;
    const created = await api.call('POST', '/api/teams', { token, json: body, headers: withKey(key) });
    expect(created.status).toBe(201);
    expect(created.headers.get('idempotent-replayed')).toBeNull();
  });

  it('replays only to a live session: a signed-out token gets 401, not the stored answer', async () => {
    const user = await signUp(api, 'user');
    const key = randomUUID();
    const body = { name: 'Kept', slug: freshSlug() };
    expect((await api.call('POST', '/api/teams', { token: user.token, json: body, headers: withKey(key) })).status).toBe(201);
    expect((await api.call('POST', '/api/auth/signout', { token: user.token })).status).toBe(200);
    const replay = await api.call('POST', '/api/teams', { token: user.token, json: body, headers: withKey(key) });
    expect(replay.status).toBe(401);
    // Nor the key's other answers: another request under it is 401 too, not 422.
    const reused = await api.call('POST', '/api/teams', { token: user.token, json: { ...body, name: 'Other' }, headers: withKey(key) });
    expect(reused.status).toBe(401);
  });

  it('is ignored on the POSTs without a token: each sign-in opens its own session', async () => {
    const user = await signUp(api, 'user');
    const key = randomUUID();
    const signIn = () =>
      api.call('POST', '/api/auth/signin', { json: { email: user.email, password: user.password }, headers: withKey(key) });
    const [a, b] = [await signIn(), await signIn()];
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(a.body.data.session.refresh_token).not.toBe(b.body.data.session.refresh_token);
    expect(b.headers.get('idempotent-replayed')).toBeNull();
  });

  it('20 identical invites racing under one key: one invite, one e-mail, and each answer the first one or 409', async () => {
    const owner = await signUp(api, 'owner');
    const guest = await signUp(api, 'guest');
    const team = await createTeam(api, owner);
    const key = randomUUID();
    let open: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const inFlight = Array.from({ length: 20 }, async () => {
      await gate;
      return invite(owner, team.slug, guest.email, key);
    });
    open();
    const answers = await Promise.all(inFlight);
    const done = answers.filter((r) => r.status === 201);
    const busy = answers.filter((r) => r.status === 409);
    expect(done.length + busy.length).toBe(20);
    expect(done.length).toBeGreaterThanOrEqual(1);
    for (const r of done) expect(r.body).toEqual({ data: {} });
    expect(done.filter((r) => r.headers.get('idempotent-replayed') === null)).toHaveLength(1);
    for (const r of busy) {
      expect(code(r)).toBe('idempotency_in_progress');
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
    const uuid = await pendingUuid(guest, team.slug);
    expect((await messagesFor(uuid)).map((m) => m.kind)).toEqual(['invitation']);
    // A retry after the race gets the first answer too, and sends nothing.
    const retry = await invite(owner, team.slug, guest.email, key);
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(await messagesFor(uuid)).toHaveLength(1);
  });
});

describe('the claim (lib/http/idempotency-store.ts)', () => {
  it('frees the key after a 409 conflict; keeps a run cut short as its 503 until the run settles its own answer', async () => {
    const [{ settleHeld, stillRunning }, { AppError, serviceUnavailable }] = await Promise.all([
      import('#lib/http/idempotency.ts'),
      import('#lib/core/errors.ts'),
    ]);
    const who = { userUuid: randomUUID(), key: randomUUID() };
    const answer = (statusCode: number, body: string) => ({ statusCode, body });
    const first = await claimKey(db(), who, print, Date.now(), HOLD);
    if (first.kind !== 'run') throw new Error('expected to run');
    await settleHeld({ held: first.held }, answer(409, '{"error":{"code":"conflict"}}'), new AppError('conflict'));
    const second = await claimKey(db(), who, print, Date.now(), HOLD);
    if (second.kind !== 'run') throw new Error('the conflict was kept');
    // Cut short: the 503 is what retries get, with no run beside it...
    await settleHeld({ held: second.held }, answer(503, '{"error":{"code":"unavailable"}}'), stillRunning(serviceUnavailable()));
    expect(await claimKey(db(), who, print, Date.now() + HOLD * 2, HOLD)).toEqual({
      kind: 'replay',
      status: 503,
      body: '{"error":{"code":"unavailable"}}',
    });
    // ...until the interrupted run ends and settles its own answer over it.
    await settleHeld({ held: second.held }, answer(201, '{"data":{}}'));
    expect(await claimKey(db(), who, print, Date.now(), HOLD)).toEqual({ kind: 'replay', status: 201, body: '{"data":{}}' });
  });

  const owner = () => ({ userUuid: randomUUID(), key: randomUUID() });
  const print = fingerprintOf('teams-create', '/api/teams', { slug: 'x' });
  const HOLD = 11_000;

  it('is taken over once its holder’s lock ran out, and the old holder can then neither settle nor free it', async () => {
    const who = owner();
    const now = Date.now();
    const first = await claimKey(db(), who, print, now, HOLD);
    expect(first.kind).toBe('run');
    await expect(claimKey(db(), who, print, now + HOLD - 1, HOLD)).rejects.toMatchObject({ code: 'idempotency_in_progress' });
    const second = await claimKey(db(), who, print, now + HOLD, HOLD);
    expect(second.kind).toBe('run');
    if (first.kind !== 'run' || second.kind !== 'run') return;
    await settleKey(db(), first.held, { status: 201, body: '{"data":"old"}' });
    await releaseKey(db(), first.held);
    await expect(claimKey(db(), who, print, now + HOLD + 1, HOLD)).rejects.toMatchObject({ code: 'idempotency_in_progress' });
    await settleKey(db(), second.held, { status: 201, body: '{"data":"new"}' });
    expect(await claimKey(db(), who, print, now + HOLD + 2, HOLD)).toEqual({ kind: 'replay', status: 201, body: '{"data":"new"}' });
  });

  it('is free again once released, and forgotten after the 24-hour window', async () => {
    const who = owner();
    const now = Date.now();
    const first = await claimKey(db(), who, print, now, HOLD);
    if (first.kind !== 'run') throw new Error('expected to run');
    await releaseKey(db(), first.held);
    const second = await claimKey(db(), who, print, now + 1, HOLD);
    if (second.kind !== 'run') throw new Error('expected to run');
    await settleKey(db(), second.held, { status: 200, body: '{"data":{}}' });
    expect((await claimKey(db(), who, print, now + IDEMPOTENCY_WINDOW_MS - 1000, HOLD)).kind).toBe('replay');
    expect((await claimKey(db(), who, print, now + IDEMPOTENCY_WINDOW_MS + 1000, HOLD)).kind).toBe('run');
  });
});
