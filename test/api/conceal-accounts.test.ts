/**
 * CONCEAL_ACCOUNTS=true (docs/accounts.md, "Concealing accounts"): sign-up and e-mail change answer
 * for an address an account holds as for a new one and mail its owner instead, an unconfirmed
 * account signs in no one, and @supabase/auth-js sees GoTrue's "confirm first" answers.
 */
import { GoTrueClient } from '@supabase/auth-js';
import { describe, expect, it, vi } from 'vitest';
import { db } from '#lib/db/service.ts';
import { deliver } from '#lib/mail/outbox.ts';
import { outboxRefOf } from '#lib/mail/outbox-ref.ts';
import type { MailMessage } from '#lib/mail/safety.ts';
import { confirm, freshEmail, useApi } from '../helpers/api.ts';

vi.hoisted(() => {
  process.env.CONCEAL_ACCOUNTS = 'true';
  // As deployed: one e-mail of a kind a minute to an address (test/setup.ts turns it off elsewhere).
  process.env.RECIPIENT_MAIL_GAP_SECONDS = '60';
});

const api = useApi();
const PASSWORD = 'correct horse battery staple';

const sent: MailMessage[] = [];
const deliverPending = async () => {
  const { data } = await db()
    .entities.outboxMessage.scan.where((a, op) => op.eq(a.status, 'PENDING'))
    .go({ pages: 'all' });
  for (const item of data) {
    const ref = outboxRefOf(item);
    if (ref) await deliver(db(), { kind: 'log', maxSendMs: 0, send: async (m) => void sent.push(m) }, ref);
  }
};
const subjectsTo = (address: string) =>
  sent
    .filter((m) => m.to === address)
    .map((m) => m.subject)
    .sort();

const signUp = (email: string, password = PASSWORD) =>
  api.call('POST', '/api/auth/signup', { json: { email, password, firstName: 'Ada', lastName: 'Lee' } });

/** The answer with what differs by nature (the fresh id, the time) set aside. */
const shape = (body: { data: { session: unknown; user: Record<string, unknown> } }) => {
  const { id, created_at, updated_at, ...rest } = body.data.user;
  expect(id).toEqual(expect.any(String));
  expect([created_at, updated_at]).toEqual([expect.any(String), expect.any(String)]);
  return { session: body.data.session, user: { ...rest, email: '(the address)' } };
};

describe('sign-up with CONCEAL_ACCOUNTS', () => {
  it('answers a new address and an address in use alike; the owner is told, the newcomer gets the link', async () => {
    const taken = freshEmail('owner');
    const first = await signUp(taken);
    expect(first.status).toBe(201);
    expect(first.body.data.session).toBeNull();

    const again = await signUp(taken, 'another passphrase entirely');
    const fresh = await signUp(freshEmail('newcomer'));
    expect([again.status, fresh.status]).toEqual([201, 201]);
    expect(shape(again.body)).toEqual(shape(fresh.body));
    expect(again.body.data.user.id).not.toBe(first.body.data.user.id);

    await deliverPending();
    expect(subjectsTo(taken)).toEqual(
      ['Confirm your e-mail address for Roster', 'Someone tried to use your e-mail address on Roster'].sort(),
    );
    expect(subjectsTo(fresh.body.data.user.email)).toEqual(['Confirm your e-mail address for Roster']);
    // Nothing changed for the owner: one account, its password.
    const claim = (await db().entities.emailClaim.get({ email: taken }).go({ consistent: true })).data;
    expect(claim?.userUuid).toBe(first.body.data.user.id);
  });

  it('tells the owner of an address in use once a minute, however often sign-up is asked', async () => {
    const taken = freshEmail('often');
    await signUp(taken);
    for (let n = 0; n < 5; n++) expect((await signUp(taken, `another passphrase ${n}`)).status).toBe(201);
    await deliverPending();
    expect(subjectsTo(taken).filter((s) => s.startsWith('Someone tried'))).toHaveLength(1);
  });

  it('an unconfirmed account signs in no one (as a wrong password); once confirmed, it does', async () => {
    const email = freshEmail('unconfirmed');
    const { body } = await signUp(email);
    const signIn = (password: string) => api.call('POST', '/api/auth/signin', { json: { email, password } });
    const right = await signIn(PASSWORD);
    const wrong = await signIn('not the passphrase at all');
    expect([right.status, right.body.error.code]).toEqual([401, 'invalid_credentials']);
    expect(right.body).toEqual(wrong.body);
    await confirm(api, { email, uuid: body.data.user.id });
    expect((await signIn(PASSWORD)).status).toBe(200);
  });

  it('an e-mail change to an address in use answers as to a free one; its owner is told, no link goes', async () => {
    const owner = freshEmail('holder');
    await signUp(owner);
    const mover = freshEmail('mover');
    const { body } = await signUp(mover);
    await confirm(api, { email: mover, uuid: body.data.user.id });
    const session = (await api.call('POST', '/api/auth/signin', { json: { email: mover, password: PASSWORD } })).body.data.session;
    const change = (to: string) =>
      api.call('PUT', '/api/auth/user', { token: session.access_token, json: { email: to, currentPassword: PASSWORD } });
    await deliverPending(); // the sign-ups' own links first
    const toTaken = await change(owner);
    expect(toTaken.status).toBe(200);
    expect(toTaken.body.data.new_email).toBe(owner);
    sent.length = 0;
    await deliverPending();
    expect(subjectsTo(owner)).toEqual(['Someone tried to use your e-mail address on Roster']);
    expect(subjectsTo(mover)).toEqual(['A change of your Roster e-mail address was requested']);
  });

  it('@supabase/auth-js: signUp answers the user and no session, for a new address and one in use alike', async () => {
    const auth = new GoTrueClient({ url: `${api.url}/auth/v1`, persistSession: false, autoRefreshToken: false, detectSessionInUrl: false });
    const email = freshEmail('authjs-conceal');
    const first = await auth.signUp({ email, password: PASSWORD, options: { data: { firstName: 'Ada', plan: 'pro' } } });
    const second = await auth.signUp({ email, password: PASSWORD, options: { data: { firstName: 'Ada', plan: 'pro' } } });
    for (const { data, error } of [first, second]) {
      expect(error).toBeNull();
      expect(data.session).toBeNull();
      expect(data.user).toMatchObject({ email, user_metadata: { plan: 'pro' } });
    }
    expect(second.data.user?.id).not.toBe(first.data.user?.id);
    const signIn = await auth.signInWithPassword({ email, password: PASSWORD });
    expect(signIn.error).toMatchObject({ status: 400, code: 'invalid_credentials' });
  });
});
