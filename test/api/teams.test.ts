import { describe, expect, it } from 'vitest';
import { db } from '#lib/db/service.ts';
import { addMember, createTeam, freshSlug, signUp, useApi } from '../helpers/api.ts';

const api = useApi();
const MILLIS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('teams', () => {
  it('creates a team (201) with the seed fields, the creator as OWNER', async () => {
    const owner = await signUp(api);
    const slug = freshSlug();
    const res = await api.call('POST', '/api/teams', { token: owner.token, json: { name: '  Acme  ', slug } });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      data: {
        id: expect.any(Number),
        name: 'Acme',
        slug,
        logo: null,
        requireMfa: false,
        createdAt: expect.stringMatching(MILLIS),
        updatedAt: expect.stringMatching(MILLIS),
      },
    });
    expect(Number.isSafeInteger(res.body.data.id)).toBe(true);
    const members = await api.call('GET', `/api/teams/${slug}/members`, { token: owner.token });
    expect(members.body.data).toEqual([expect.objectContaining({ role: 'OWNER', email: owner.email })]);
  });

  it('refuses a taken slug with 409 slug_taken', async () => {
    const [a, b] = [await signUp(api), await signUp(api)];
    const { slug } = await createTeam(api, a);
    const res = await api.call('POST', '/api/teams', { token: b.token, json: { name: 'Other', slug } });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('slug_taken');
  });

  it.each([
    ['uppercase', 'Acme'],
    ['one character', 'a'],
    ['49 characters', 'a'.repeat(49)],
    ['a leading dash', '-acme'],
    ['a trailing dash', 'acme-'],
    ['a slash', 'ac/me'],
    ['a space', 'ac me'],
    ['non-ASCII', 'acmé'],
    ['a hash', 'ac#me'],
  ])('refuses a slug with %s (422, not rewritten)', async (_, slug) => {
    const owner = await signUp(api);
    const res = await api.call('POST', '/api/teams', { token: owner.token, json: { name: 'N', slug } });
    expect(res.status).toBe(422);
    expect(res.body.error.fields.slug).toBeDefined();
  });

  it('takes slugs of 2 and 48 characters and names of 1 to 100 characters', async () => {
    const owner = await signUp(api);
    const long = `z${Date.now().toString(36)}${'x'.repeat(48)}`.slice(0, 48);
    expect((await api.call('POST', '/api/teams', { token: owner.token, json: { name: 'x', slug: long } })).status).toBe(201);
    // This file's table is its own, so no other test holds this two-character slug.
    expect((await api.call('POST', '/api/teams', { token: owner.token, json: { name: 'x'.repeat(100), slug: 'q7' } })).status).toBe(201);
    const tooLong = await api.call('POST', '/api/teams', { token: owner.token, json: { name: 'x'.repeat(101), slug: freshSlug() } });
    expect(tooLong.status).toBe(422);
    const blank = await api.call('POST', '/api/teams', { token: owner.token, json: { name: '   ', slug: freshSlug() } });
    expect(blank.status).toBe(422);
  });

  it('lists only the teams the caller belongs to, in the order joined', async () => {
    const [a, b] = [await signUp(api), await signUp(api)];
    const first = await createTeam(api, a);
    const second = await createTeam(api, a);
    await createTeam(api, b);
    const res = await api.call('GET', '/api/teams', { token: a.token });
    expect(res.status).toBe(200);
    expect(res.body.data.map((t: { slug: string }) => t.slug)).toEqual([first.slug, second.slug]);
  });

  it('gets a team by slug', async () => {
    const owner = await signUp(api);
    const { slug, id } = await createTeam(api, owner);
    const res = await api.call('GET', `/api/teams/${slug}`, { token: owner.token });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id, slug, logo: null });
  });

  it('renames a team in place and moves it to a new slug, freeing the old one', async () => {
    const [owner, other] = [await signUp(api), await signUp(api)];
    const { slug, id } = await createTeam(api, owner);
    const renamed = await api.call('PUT', `/api/teams/${slug}`, { token: owner.token, json: { name: 'Renamed', slug } });
    expect(renamed.status).toBe(200);
    expect(renamed.body.data).toMatchObject({ id, name: 'Renamed', slug });

    const next = freshSlug('moved');
    const moved = await api.call('PUT', `/api/teams/${slug}`, { token: owner.token, json: { name: 'Moved', slug: next } });
    expect(moved.status).toBe(200);
    expect(moved.body.data).toMatchObject({ id, name: 'Moved', slug: next });
    expect(moved.body.data.updatedAt >= moved.body.data.createdAt).toBe(true);
    expect((await api.call('GET', `/api/teams/${slug}`, { token: owner.token })).status).toBe(404);
    expect((await api.call('GET', `/api/teams/${next}`, { token: owner.token })).body.data.name).toBe('Moved');
    // The old slug is free again.
    expect((await api.call('POST', '/api/teams', { token: other.token, json: { name: 'Reuse', slug } })).status).toBe(201);
  });

  it('refuses to move onto a taken slug (409) and leaves the team as it was', async () => {
    const owner = await signUp(api);
    const a = await createTeam(api, owner);
    const b = await createTeam(api, owner);
    const res = await api.call('PUT', `/api/teams/${a.slug}`, { token: owner.token, json: { name: 'X', slug: b.slug } });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('slug_taken');
    expect((await api.call('GET', `/api/teams/${a.slug}`, { token: owner.token })).body.data.id).toBe(a.id);
  });

  it('deletes a team with its members and invites; the slug can be used again', async () => {
    const [owner, member, invitee] = [await signUp(api), await signUp(api), await signUp(api)];
    const { slug, id } = await createTeam(api, owner);
    await addMember(api, slug, owner, member, 'MEMBER');
    await api.call('POST', `/api/teams/${slug}/invites`, { token: owner.token, json: { email: invitee.email, role: 'ADMIN' } });

    const res = await api.call('DELETE', `/api/teams/${slug}`, { token: owner.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: {} });
    // The rest is left to the background cleanup (test/load/team-cleanup.test.ts), whose job the deletion wrote in its transaction.
    expect((await db().entities.teamCleanup.get({ teamId: id }).go({ consistent: true })).data).toMatchObject({
      teamId: id,
      slug,
      deletedAt: expect.any(String),
    });
    expect((await api.call('GET', `/api/teams/${slug}`, { token: owner.token })).status).toBe(404);
    expect((await api.call('GET', '/api/teams', { token: member.token })).body.data).toEqual([]);
    expect((await api.call('GET', '/api/invites', { token: invitee.token })).body.data).toEqual([]);
    expect((await api.call('POST', '/api/teams', { token: member.token, json: { name: 'Again', slug } })).status).toBe(201);
    // The former member is not a member of the new team that took the slug.
    expect((await api.call('GET', `/api/teams/${slug}/members`, { token: owner.token })).status).toBe(404);
  });

  it('answers 404 for a team that does not exist, and for a malformed slug', async () => {
    const user = await signUp(api);
    expect((await api.call('GET', '/api/teams/no-such-team', { token: user.token })).status).toBe(404);
    const bad = await api.call('GET', '/api/teams/NOT_A_SLUG', { token: user.token });
    expect(bad.status).toBe(404);
    expect(bad.body.error.code).toBe('not_found');
  });
});
