import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { RosterError, type Session } from '../src/index.js';
import { PASSWORD, newClient, present, recordingFetch, signedUp } from './helpers.js';

const refreshes = (requests: { path: string }[]) => requests.filter((r) => r.path === '/api/auth/refresh').length;

describe('sessions', () => {
  it('sends the access token as `Token` and refreshes once, for all concurrent calls, near expiry', async () => {
    const { requests, fetch } = recordingFetch();
    const changes: (Session | null)[] = [];
    // The server's tokens last 65 s (test/global-setup.ts): with the default 60 s margin, refresh
    // is due about 5 s after sign-up.
    const margin = 60;
    // Unconfirmed: waiting for the confirmation e-mail could take longer than those 5 s.
    const { client, session } = await signedUp('kim', { fetch, onSessionChange: (s) => changes.push(s) }, { confirmed: false });
    expect(session.expires_in).toBe(65);

    await client.teams.list();
    expect(refreshes(requests)).toBe(0);
    expect(requests.at(-1)?.authorization).toBe(`Token ${session.access_token}`);

    await sleep((session.expires_at - margin) * 1000 - Date.now() + 100);
    requests.length = 0;
    // Routes an unconfirmed account may call (its own invitations need a confirmed address).
    await Promise.all([client.teams.list(), client.auth.user(), client.auth.user(), client.auth.sessions(), client.teams.all().next()]);
    expect(refreshes(requests)).toBe(1);

    const renewed = present(client.session);
    expect(renewed.access_token).not.toBe(session.access_token);
    expect(renewed.refresh_token).not.toBe(session.refresh_token);
    expect(changes).toEqual([session, renewed]);
    const calls = requests.filter((r) => r.path !== '/api/auth/refresh');
    expect(calls).toHaveLength(5);
    for (const call of calls) expect(call.authorization).toBe(`Token ${renewed.access_token}`);
  });

  it('refreshes and retries once when a token it thought valid is refused', async () => {
    const { session } = await signedUp('lee');
    const { requests, fetch } = recordingFetch();
    // The same session with an access token the server refuses (as after clock skew).
    const client = newClient({ fetch, session: { ...session, access_token: `${session.access_token}x` } });
    expect((await client.auth.user()).id).toBe(session.user.id);
    expect(requests.map((r) => r.path)).toEqual(['/api/auth/user', '/api/auth/refresh', '/api/auth/user']);
  });

  it('signs out: the session is forgotten and its tokens fail with 401', async () => {
    const changes: (Session | null)[] = [];
    const { client, session } = await signedUp('max', { onSessionChange: (s) => changes.push(s) });
    await client.auth.signOut();
    expect(client.session).toBeNull();
    expect(changes).toEqual([session, null]);

    const error = await client.teams.list().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RosterError);
    expect(error).toMatchObject({ status: 401, code: 'unauthorized' });

    // A copy of the old session: its call is refused, its one refresh too, and it is dropped.
    const { requests, fetch } = recordingFetch();
    const stale = newClient({ fetch, session });
    await expect(stale.auth.user()).rejects.toMatchObject({ status: 401, code: 'unauthorized' });
    expect(requests.map((r) => r.path)).toEqual(['/api/auth/user', '/api/auth/refresh']);
    expect(stale.session).toBeNull();
  });

  it('lists and ends sessions, and signs in again', async () => {
    const { client, email } = await signedUp('ned');
    const other = newClient();
    await other.auth.signIn({ email, password: PASSWORD });
    const sessions = await client.auth.sessions();
    expect(sessions).toHaveLength(2);
    const otherSession = present(sessions.find((s) => !s.current));
    await client.auth.revokeSession(otherSession.id);
    await expect(other.auth.user()).rejects.toMatchObject({ status: 401 });
    expect(other.session).toBeNull();

    const user = await client.auth.updateUser({ firstName: 'Edward' });
    expect(user.user_metadata.firstName).toBe('Edward');
    await client.auth.signOut({ scope: 'global' });
    const again = await client.auth.signIn({ email, password: PASSWORD });
    expect((await client.auth.user()).id).toBe(again.user.id);
  });

  it('refreshes on demand, never sending a refresh token twice', async () => {
    const { requests, fetch } = recordingFetch();
    const { client, session } = await signedUp('ola', { fetch });
    const [a, b] = await Promise.all([client.auth.refresh(), client.auth.refresh()]);
    expect(a).toBe(b);
    expect(refreshes(requests)).toBe(1);
    expect(a.refresh_token).not.toBe(session.refresh_token);
    expect((await client.auth.refresh()).refresh_token).not.toBe(a.refresh_token);
  });

  it('serves the public signing keys without a session', async () => {
    const { keys } = await newClient().jwks();
    // RS256 is the default signing algorithm: the key API Gateway's JWT authorizers accept.
    expect(keys[0]).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig' });
  });
});
