import { describe, expect, expectTypeOf, it } from 'vitest';
import { RosterError, type Session } from '../src/index.js';
import { PASSWORD, mailedToken, newClient, signedUp, unique } from './helpers.js';

const NEW_PASSWORD = 'a brand new passphrase';

describe('address confirmation', () => {
  it('confirms the address with the mailed link, without a session; the link works once', async () => {
    const { client, email } = await signedUp('vic', {}, { confirmed: false });
    expect(await client.auth.user()).toMatchObject({ email, email_confirmed_at: null, confirmed_at: null });

    const token = await mailedToken(email, '/verify');
    const user = await newClient().auth.verify(token);
    expect(user).toMatchObject({ email, email_confirmed_at: expect.any(String) });
    expect(user.confirmed_at).toBe(user.email_confirmed_at);
    expect(await client.auth.user()).toEqual(user);

    await expect(client.auth.verify(token)).rejects.toMatchObject({ status: 410, code: 'token_expired' });
  });

  it('answers a token it never issued with a typed 410 token_expired', async () => {
    const error = await newClient()
      .auth.verify('not-a-token-roster-issued')
      .catch((e: unknown) => e);
    if (!(error instanceof RosterError) || error.code !== 'token_expired') throw error;
    expectTypeOf(error.code).toEqualTypeOf<'token_expired'>();
    expect(error.status).toBe(410);
  });

  it('mails a new link on request', async () => {
    const { client, email } = await signedUp('ren', {}, { confirmed: false });
    await mailedToken(email, '/verify');
    await expect(client.auth.resendVerification()).resolves.toBeUndefined();
    const second = await mailedToken(email, '/verify', 2);
    expect((await client.auth.verify(second)).email_confirmed_at).toEqual(expect.any(String));
    // Confirmed already: the same answer, and nothing is sent.
    await expect(client.auth.resendVerification()).resolves.toBeUndefined();
  });

  it('refuses invitations from an address not confirmed yet', async () => {
    const { client } = await signedUp('uma', {}, { confirmed: false });
    const slug = unique('unconfirmed');
    await client.teams.create({ name: 'Unconfirmed', slug });
    const error = await client.invites.create(slug, { email: `${unique('guest')}@example.com`, role: 'MEMBER' }).catch((e: unknown) => e);
    if (!(error instanceof RosterError) || error.code !== 'email_not_verified') throw error;
    expect(error.status).toBe(403);
  });
});

describe('password reset', () => {
  it('answers {} to an unknown address as to a known one', async () => {
    const anonymous = newClient();
    await expect(anonymous.auth.recover(`${unique('nobody')}@example.com`)).resolves.toBeUndefined();
    const { email } = await signedUp('kay', {}, { confirmed: false });
    await expect(anonymous.auth.recover(email)).resolves.toBeUndefined();
  });

  it('resets with the mailed link: keeps the new session, ends the others, confirms the address', async () => {
    const { client, email } = await signedUp('rex', {}, { confirmed: false });
    await newClient().auth.recover(email);
    const token = await mailedToken(email, '/reset');

    const changes: (Session | null)[] = [];
    const other = newClient({ onSessionChange: (s) => changes.push(s) });
    const session = await other.auth.reset(token, NEW_PASSWORD);
    expect(other.session).toBe(session);
    expect(changes).toEqual([session]);
    expect(await other.auth.user()).toMatchObject({ email, email_confirmed_at: expect.any(String) });

    await expect(client.auth.user()).rejects.toMatchObject({ status: 401, code: 'unauthorized' });
    await expect(newClient().auth.signIn({ email, password: PASSWORD })).rejects.toMatchObject({
      status: 401,
      code: 'invalid_credentials',
    });
    await newClient().auth.signIn({ email, password: NEW_PASSWORD });
    await expect(newClient().auth.reset(token, 'yet another passphrase')).rejects.toMatchObject({ status: 410, code: 'token_expired' });
  });

  it('refuses a confirmation token as a reset token', async () => {
    const { email } = await signedUp('tia', {}, { confirmed: false });
    const token = await mailedToken(email, '/verify');
    await expect(newClient().auth.reset(token, NEW_PASSWORD)).rejects.toMatchObject({ status: 410, code: 'token_expired' });
  });
});

describe('e-mail change', () => {
  it('changes the address once the link mailed to the new one is followed', async () => {
    const { client, email } = await signedUp('eli');
    const next = `${unique('eli-new')}@example.com`;
    const pending = await client.auth.updateUser({ email: next, currentPassword: PASSWORD });
    expect(pending).toMatchObject({ email, new_email: next });

    const changed = await newClient().auth.verify(await mailedToken(next, '/verify'));
    expect(changed).toMatchObject({ email: next, email_confirmed_at: expect.any(String) });
    expect(changed.new_email).toBeUndefined();
    await newClient().auth.signIn({ email: next, password: PASSWORD });
    await expect(newClient().auth.signIn({ email, password: PASSWORD })).rejects.toMatchObject({
      status: 401,
      code: 'invalid_credentials',
    });
  });
});

describe('account deletion', () => {
  it('refuses a wrong password with 422 on currentPassword', async () => {
    const { client } = await signedUp('wes', {}, { confirmed: false });
    const error = await client.auth.deleteAccount(`not ${PASSWORD}`).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 422, code: 'validation_failed', fields: { currentPassword: expect.any(String) } });
    expect(client.session).not.toBeNull();
  });

  it('refuses while the user is the only owner of a team, naming it', async () => {
    const { client } = await signedUp('sol', {}, { confirmed: false });
    const slug = unique('solo');
    await client.teams.create({ name: 'Solo', slug });
    const error = await client.auth.deleteAccount(PASSWORD).catch((e: unknown) => e);
    if (!(error instanceof RosterError) || error.code !== 'sole_owner') throw error;
    expect(error.status).toBe(409);
    expect(error.fields?.teams?.split(',')).toEqual([slug]);
    expect(client.session).not.toBeNull();
  });

  it('deletes a fresh account: the session ends, sign-in fails and the address is free again', async () => {
    const changes: (Session | null)[] = [];
    const { client, email, session } = await signedUp('del', { onSessionChange: (s) => changes.push(s) }, { confirmed: false });
    const sameSession = newClient({ session });
    await expect(client.auth.deleteAccount(PASSWORD)).resolves.toBeUndefined();
    expect(client.session).toBeNull();
    expect(changes).toEqual([session, null]);

    await expect(sameSession.auth.user()).rejects.toMatchObject({ status: 401, code: 'unauthorized' });
    await expect(newClient().auth.signIn({ email, password: PASSWORD })).rejects.toMatchObject({
      status: 401,
      code: 'invalid_credentials',
    });
    await newClient().auth.signUp({ email, password: PASSWORD, firstName: 'Del', lastName: 'Again' });
  });
});
