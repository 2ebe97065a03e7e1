import { describe, expect, it } from 'vitest';
import { RosterClient, type RosterClientOptions, RosterNetworkError, type Session } from '../src/index.js';

/** Refresh edge cases the live server cannot produce on demand, against a stub fetch. */
const session = (secondsLeft: number): Session => ({
  access_token: 'access-1',
  token_type: 'bearer',
  expires_in: 3600,
  expires_at: Math.floor(Date.now() / 1000) + secondsLeft,
  refresh_token: 'refresh-1',
  user: {
    id: '00000000-0000-4000-8000-000000000000',
    aud: 'authenticated',
    role: 'authenticated',
    email: 'ann@example.com',
    email_confirmed_at: null,
    confirmed_at: null,
    last_sign_in_at: null,
    app_metadata: { provider: 'email', providers: ['email'] },
    user_metadata: { firstName: 'Ann', lastName: 'Lee' },
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
  },
});

/** Answers the paths it knows; any other request fails as a dropped connection would. */
const stub = (start: Session, answers: Record<string, () => Response>, options: Partial<RosterClientOptions> = {}) => {
  const sent: string[] = [];
  const changes: (Session | null)[] = [];
  const client = new RosterClient({
    baseUrl: 'http://roster.test',
    session: start,
    onSessionChange: (s) => changes.push(s),
    fetch: async (request) => {
      const path = new URL(request.url).pathname;
      sent.push(path);
      const answer = answers[path];
      if (!answer) throw new TypeError('fetch failed');
      return answer();
    },
    ...options,
  });
  return { client, sent, changes };
};

const user = () => Response.json({ data: session(0).user });

it('refreshes only within refreshMarginSeconds of expiry', async () => {
  const { client, sent } = stub(session(30), { '/api/auth/user': user }, { refreshMarginSeconds: 20 });
  await client.auth.user();
  expect(sent).toEqual(['/api/auth/user']);
});

describe('refresh without an answer', () => {
  it('never sends that refresh token again; the access token serves until it expires', async () => {
    const start = session(30);
    const { client, sent, changes } = stub(start, { '/api/auth/user': user });
    await client.auth.user();
    await client.auth.user();
    await expect(client.auth.refresh()).rejects.toMatchObject({ status: 401, code: 'unauthorized' });
    expect(sent).toEqual(['/api/auth/refresh', '/api/auth/user', '/api/auth/user']);
    expect(client.session).toBe(start);
    expect(changes).toEqual([]);
  });

  it('forgets an expired session it can no longer refresh', async () => {
    const { client, sent, changes } = stub(session(-1), {});
    await expect(client.auth.user()).rejects.toBeInstanceOf(RosterNetworkError);
    await expect(client.auth.user()).rejects.toMatchObject({ status: 401, code: 'unauthorized' });
    expect(sent).toEqual(['/api/auth/refresh']);
    expect(changes).toEqual([null]);
  });
});

it('forgets the session when the server refuses its refresh token', async () => {
  const refused = () => Response.json({ error: { code: 'unauthorized', message: 'Sign in again.' } }, { status: 401 });
  const { client, sent, changes } = stub(session(10), { '/api/auth/refresh': refused, '/api/auth/user': user });
  await expect(client.auth.user()).rejects.toMatchObject({ status: 401, message: 'Sign in again.' });
  expect(sent).toEqual(['/api/auth/refresh']);
  expect(changes).toEqual([null]);
});
