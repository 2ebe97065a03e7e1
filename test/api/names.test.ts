import { describe, expect, it } from 'vitest';
import { db } from '#lib/db/service.ts';
import { type Reply, createTeam, freshEmail, signUp, useApi } from '../helpers/api.ts';

/**
 * Names and addresses as they arrive over HTTP (docs/api.md, "Names" and "E-mail addresses"):
 * hidden characters in names and non-ASCII addresses are 422 on the field, and nothing is written.
 */
const api = useApi();

const refusedOn = (res: Reply, field: string) => {
  expect(res.status).toBe(422);
  expect(res.body.error.code).toBe('validation_failed');
  expect(Object.keys(res.body.error.fields)).toEqual([field]);
};

/** Bidirectional controls, zero-width and other invisible characters, and names made only of them. */
const HIDDEN_NAMES = [
  'Payroll \u202Egnp.exe',
  'A\u2066B\u2069',
  'Ann\u200ELee',
  'Ann\u061C',
  'Ann\u200BLee',
  'Ann\u2060Lee',
  'Ann\uFEFFLee',
  'Ann\u00ADLee',
  'Ann\u180ELee',
  '\u200B\u200C\u200D',
  '\u3164',
  '\uFE0F',
  '\u200D',
  ' \u200B ',
];

describe('names refuse hidden characters (422)', () => {
  it('team names, on create and on rename, write nothing', async () => {
    const owner = await signUp(api);
    const team = await createTeam(api, owner);
    const before = (await api.call('GET', `/api/teams/${team.slug}`, { token: owner.token })).body.data.name as string;
    for (const name of HIDDEN_NAMES) {
      const slug = `hidden-${Math.random().toString(36).slice(2, 10)}`;
      refusedOn(await api.call('POST', '/api/teams', { token: owner.token, json: { name, slug } }), 'name');
      expect((await api.call('GET', `/api/teams/${slug}`, { token: owner.token })).status).toBe(404);
      refusedOn(await api.call('PUT', `/api/teams/${team.slug}`, { token: owner.token, json: { name, slug: team.slug } }), 'name');
    }
    expect((await api.call('GET', `/api/teams/${team.slug}`, { token: owner.token })).body.data.name).toBe(before);
  });

  it('first and last names, on sign-up and on update', async () => {
    const user = await signUp(api);
    for (const name of HIDDEN_NAMES) {
      const email = freshEmail('hidden');
      const signup = { email, password: 'correct horse battery staple', firstName: 'Ann', lastName: 'Lee' };
      refusedOn(await api.call('POST', '/api/auth/signup', { json: { ...signup, firstName: name } }), 'firstName');
      refusedOn(await api.call('POST', '/api/auth/signup', { json: { ...signup, lastName: name } }), 'lastName');
      expect((await db().entities.emailClaim.get({ email }).go()).data).toBeNull();
      refusedOn(await api.call('PUT', '/api/auth/user', { token: user.token, json: { firstName: name } }), 'firstName');
      refusedOn(await api.call('PUT', '/api/auth/user', { token: user.token, json: { lastName: name } }), 'lastName');
    }
    expect((await api.call('GET', '/api/auth/user', { token: user.token })).body.data.user_metadata).toMatchObject({
      firstName: 'user',
      lastName: 'Tester',
    });
  });

  it('takes emoji sequences and joiners inside words, stored as sent', async () => {
    const owner = await signUp(api);
    for (const name of [
      '\u{1F469}\u200D\u{1F4BB} Devs',
      '\u2764\uFE0F\u200D\u{1F525}',
      '\u0645\u06CC\u200C\u062E\u0648\u0627\u0647\u0645',
    ]) {
      const slug = `joined-${Math.random().toString(36).slice(2, 10)}`;
      const res = await api.call('POST', '/api/teams', { token: owner.token, json: { name, slug } });
      expect(res.status).toBe(201);
      expect(res.body.data.name).toBe(name);
    }
    const res = await api.call('PUT', '/api/auth/user', { token: owner.token, json: { firstName: '\u{1F468}\u200D\u{1F373} Chef' } });
    expect(res.status).toBe(200);
  });
});

describe('e-mail addresses are ASCII, checked before lowercasing (422)', () => {
  it('refuses U+212A KELVIN SIGN (lowercased, it would be k) and other non-ASCII letters on sign-up, sign-in and invites', async () => {
    const owner = await signUp(api);
    const { slug } = await createTeam(api, owner);
    const ascii = freshEmail('kim');
    for (const email of [
      `\u212A${ascii.slice(1)}`,
      ascii.replace('@', '\u212A@'),
      `${ascii.slice(0, -1)}\u212A`,
      ascii.replace('@', '\u0130@'),
    ]) {
      refusedOn(
        await api.call('POST', '/api/auth/signup', {
          json: { email, password: 'correct horse battery staple', firstName: 'K', lastName: 'Im' },
        }),
        'email',
      );
      refusedOn(await api.call('POST', '/api/auth/signin', { json: { email, password: 'correct horse battery staple' } }), 'email');
      refusedOn(await api.call('POST', `/api/teams/${slug}/invites`, { token: owner.token, json: { email, role: 'MEMBER' } }), 'email');
    }
    // The ASCII address itself is free: nothing was claimed under its lowercase form.
    const res = await api.call('POST', '/api/auth/signup', {
      json: { email: ascii.toUpperCase(), password: 'correct horse battery staple', firstName: 'K', lastName: 'Im' },
    });
    expect(res.status).toBe(201);
    expect(res.body.data.session.user.email).toBe(ascii);
  });
});
