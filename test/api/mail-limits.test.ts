import { describe, expect, it } from 'vitest';
import { createTeam, freshEmail, signUp, useApi } from '../helpers/api.ts';

// A small hourly cap for this file; the server loads its settings when it starts (in beforeAll).
process.env.INVITE_MAILS_PER_TEAM_HOUR = '3';

const api = useApi();

describe('invitation mail limit per team', () => {
  it('counts invites and resends against the team (a re-invite mails nothing, so spends nothing), then answers 429 with Retry-After', async () => {
    const owner = await signUp(api);
    const team = await createTeam(api, owner);
    const other = await createTeam(api, owner);
    const email = freshEmail();
    const send = (slug: string, to: string) =>
      api.call('POST', `/api/teams/${slug}/invites`, { token: owner.token, json: { email: to, role: 'MEMBER' } });
    expect((await send(team.slug, email)).status).toBe(201);
    expect((await send(team.slug, email)).status).toBe(201); // re-invite: no mail
    expect((await send(team.slug, freshEmail())).status).toBe(201);
    const id = (await api.call('GET', `/api/teams/${team.slug}/invites`, { token: owner.token })).body.data[0].id;
    expect((await api.call('POST', `/api/teams/${team.slug}/invites/${id}/resend`, { token: owner.token })).status).toBe(200);

    const limited = await send(team.slug, freshEmail());
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe('rate_limited');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await api.call('POST', `/api/teams/${team.slug}/invites/${id}/resend`, { token: owner.token })).status).toBe(429);
    // Another team has its own allowance.
    expect((await send(other.slug, freshEmail())).status).toBe(201);
  });
});
