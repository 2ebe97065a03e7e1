import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimsOf } from '#lib/auth/session-items.ts';
import { db } from '#lib/db/service.ts';
import { AppError } from '#lib/core/errors.ts';
import { acceptInvite } from '#lib/teams/invites/my-invites.ts';
import { deleteInvite } from '#lib/teams/invites/team-invites.ts';
import { type Api, type TestUser, addMember, confirm, createTeam, freshEmail, signUp, useApi } from '../helpers/api.ts';
import { expireInvite } from '../helpers/invites.ts';
import { pausedBeforeFirstWrite } from '../helpers/paused.ts';

const api = useApi();
const DAY = 86_400_000;

const invite = (by: TestUser, slug: string, email: string, role = 'MEMBER') =>
  api.call('POST', `/api/teams/${slug}/invites`, { token: by.token, json: { email, role } });

const pendingFor = async (a: Api, user: TestUser, slug: string) => {
  const mine = await a.call('GET', '/api/invites', { token: user.token });
  return mine.body.data.find((i: { team: { slug: string } }) => i.team.slug === slug);
};

const expire = (inviteUuid: string) => expireInvite(inviteUuid);

describe('invites', () => {
  it('invites (201, {}), lists and reads the pending invite with the contract fields', async () => {
    const owner = await signUp(api, 'owner');
    const team = await createTeam(api, owner);
    const email = freshEmail('guest');
    const created = await invite(owner, team.slug, ` ${email.toUpperCase()} `, 'ADMIN');
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ data: {} });

    const list = await api.call('GET', `/api/teams/${team.slug}/invites`, { token: owner.token });
    expect(list.status).toBe(200);
    expect(list.body.data).toHaveLength(1);
    const item = list.body.data[0];
    expect(item).toEqual({
      id: expect.any(Number),
      uuid: expect.stringMatching(/^[0-9a-f-]{36}$/),
      teamId: team.id,
      team: { id: team.id, name: `Team ${team.slug}`, slug: team.slug },
      email,
      role: 'ADMIN',
      status: 'PENDING',
      invitedBy: { id: expect.any(Number), email: owner.email, firstName: 'owner', lastName: 'Tester' },
      expiresAt: expect.any(String),
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const days = (Date.parse(item.expiresAt) - Date.parse(item.createdAt)) / DAY;
    expect(days).toBe(7);

    const one = await api.call('GET', `/api/teams/${team.slug}/invites/${item.id}`, { token: owner.token });
    expect(one.status).toBe(200);
    expect(one.body.data).toEqual(item);
  });

  it('re-inviting a pending address updates role and expiry: still one pending invite', async () => {
    const owner = await signUp(api);
    const team = await createTeam(api, owner);
    const email = freshEmail();
    await invite(owner, team.slug, email, 'MEMBER');
    const first = (await api.call('GET', `/api/teams/${team.slug}/invites`, { token: owner.token })).body.data[0];
    expect((await invite(owner, team.slug, email.toUpperCase(), 'ADMIN')).status).toBe(201);
    const list = (await api.call('GET', `/api/teams/${team.slug}/invites`, { token: owner.token })).body.data;
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ id: first.id, uuid: first.uuid, role: 'ADMIN' });
    expect(list[0].expiresAt >= first.expiresAt).toBe(true);
  });

  it('refuses to invite a current member (409 already_member)', async () => {
    const [owner, member] = [await signUp(api), await signUp(api)];
    const { slug } = await createTeam(api, owner);
    await addMember(api, slug, owner, member, 'MEMBER');
    const res = await invite(owner, slug, member.email);
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('already_member');
    expect((await invite(owner, slug, owner.email)).body.error.code).toBe('already_member');
  });

  it('reaches an invitee who signs up later, through GET /api/invites once the address is confirmed', async () => {
    const owner = await signUp(api);
    const { slug } = await createTeam(api, owner);
    const email = freshEmail('later');
    await invite(owner, slug, email, 'ADMIN');
    const res = await api.call('POST', '/api/auth/signup', { json: { email, password: 'a fine password', firstName: 'L', lastName: 'T' } });
    const later = { email, token: res.body.data.session.access_token, uuid: res.body.data.session.user.id } as TestUser;
    const unconfirmed = await api.call('GET', '/api/invites', { token: later.token });
    expect([unconfirmed.status, unconfirmed.body.error.code]).toEqual([403, 'email_not_verified']);
    await confirm(api, later);
    const mine = await api.call('GET', '/api/invites', { token: later.token });
    expect(mine.status).toBe(200);
    expect(mine.body.data).toHaveLength(1);
    expect(mine.body.data[0]).toMatchObject({ email, role: 'ADMIN', team: { slug } });
  });

  it('previews, accepts once (member with the invited role), then 409 on any second end', async () => {
    const [owner, guest] = [await signUp(api), await signUp(api)];
    const { slug } = await createTeam(api, owner);
    await invite(owner, slug, guest.email, 'ADMIN');
    const pending = await pendingFor(api, guest, slug);

    const preview = await api.call('GET', `/api/invites/${pending.uuid}`, { token: guest.token });
    expect(preview.status).toBe(200);
    expect(preview.body.data).toEqual(pending);

    const accepted = await api.call('POST', `/api/invites/${pending.uuid}/accept`, { token: guest.token });
    expect(accepted.status).toBe(200);
    expect(accepted.body).toEqual({ data: {} });
    const members = await api.call('GET', `/api/teams/${slug}/members`, { token: guest.token });
    expect(members.body.data.find((m: { email: string }) => m.email === guest.email).role).toBe('ADMIN');

    for (const action of ['accept', 'decline']) {
      const again = await api.call('POST', `/api/invites/${pending.uuid}/${action}`, { token: guest.token });
      expect(again.status).toBe(409);
      expect(again.body.error.code).toBe('invite_not_pending');
    }
    expect((await api.call('GET', `/api/teams/${slug}/invites`, { token: owner.token })).body.data).toEqual([]);
    expect((await api.call('GET', '/api/invites', { token: guest.token })).body.data).toEqual([]);
  });

  it('declines: the invite ends and no membership is made', async () => {
    const [owner, guest] = [await signUp(api), await signUp(api)];
    const { slug } = await createTeam(api, owner);
    await invite(owner, slug, guest.email);
    const pending = await pendingFor(api, guest, slug);
    const res = await api.call('POST', `/api/invites/${pending.uuid}/decline`, { token: guest.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: {} });
    expect((await api.call('GET', `/api/teams/${slug}`, { token: guest.token })).status).toBe(404);
    expect((await api.call('POST', `/api/invites/${pending.uuid}/accept`, { token: guest.token })).status).toBe(409);
    // The address can be invited again: a new pending invite.
    expect((await invite(owner, slug, guest.email)).status).toBe(201);
    expect((await pendingFor(api, guest, slug)).uuid).not.toBe(pending.uuid);
  });

  it('deletes a pending invite ({}), after which it is not found and cannot be accepted', async () => {
    const [owner, guest] = [await signUp(api), await signUp(api)];
    const { slug } = await createTeam(api, owner);
    await invite(owner, slug, guest.email);
    const pending = await pendingFor(api, guest, slug);
    const res = await api.call('DELETE', `/api/teams/${slug}/invites/${pending.id}`, { token: owner.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: {} });
    expect((await api.call('GET', `/api/teams/${slug}/invites/${pending.id}`, { token: owner.token })).status).toBe(404);
    expect((await api.call('DELETE', `/api/teams/${slug}/invites/${pending.id}`, { token: owner.token })).status).toBe(404);
    const accept = await api.call('POST', `/api/invites/${pending.uuid}/accept`, { token: guest.token });
    expect(accept.status).toBe(409);
    expect(accept.body.error.code).toBe('invite_not_pending');
  });

  it('an expired invite is 410 on accept, decline and preview, and is not listed', async () => {
    const [owner, guest] = [await signUp(api), await signUp(api)];
    const { slug } = await createTeam(api, owner);
    await invite(owner, slug, guest.email);
    const pending = await pendingFor(api, guest, slug);
    await expire(pending.uuid);
    for (const [method, path] of [
      ['POST', `/api/invites/${pending.uuid}/accept`],
      ['POST', `/api/invites/${pending.uuid}/decline`],
      ['GET', `/api/invites/${pending.uuid}`],
    ] as const) {
      const res = await api.call(method, path, { token: guest.token });
      expect(res.status, path).toBe(410);
      expect(res.body.error.code).toBe('invite_expired');
    }
    expect((await api.call('GET', `/api/teams/${slug}/invites`, { token: owner.token })).body.data).toEqual([]);
    expect((await api.call('GET', '/api/invites', { token: guest.token })).body.data).toEqual([]);
    expect((await api.call('GET', `/api/teams/${slug}/invites/${pending.id}`, { token: owner.token })).status).toBe(404);
    // Inviting again revives the same invite with a new expiry.
    expect((await invite(owner, slug, guest.email)).status).toBe(201);
    const revived = await pendingFor(api, guest, slug);
    expect(revived.uuid).toBe(pending.uuid);
    expect((await api.call('POST', `/api/invites/${pending.uuid}/accept`, { token: guest.token })).status).toBe(200);
  });

  it('resends a pending invite (200, {}) with a fresh expiry, reviving an expired one; one mail asked for each time', async () => {
    const [owner, guest] = [await signUp(api), await signUp(api)];
    const { slug } = await createTeam(api, owner);
    await invite(owner, slug, guest.email, 'ADMIN');
    const pending = await pendingFor(api, guest, slug);
    await expire(pending.uuid);
    const res = await api.call('POST', `/api/teams/${slug}/invites/${pending.id}/resend`, { token: owner.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: {} });
    const again = await pendingFor(api, guest, slug);
    expect(again).toMatchObject({ uuid: pending.uuid, role: 'ADMIN' });
    expect(Date.parse(again.expiresAt)).toBeGreaterThan(Date.now() + 6 * DAY);
    // The invite, the re-invite-free resend: each wrote one outbox message for the mailer.
    const messages = (
      await db()
        .entities.outboxMessage.scan.where((a, op) => op.eq(a.inviteUuid, pending.uuid))
        .go()
    ).data;
    expect(messages.map((m) => [m.kind, m.status])).toEqual([
      ['invitation', 'PENDING'],
      ['invitation', 'PENDING'],
    ]);
  });

  it('resends only pending invites of the team, with the rights of inviting (404, 403)', async () => {
    const [owner, admin, member, guest] = [await signUp(api), await signUp(api), await signUp(api), await signUp(api)];
    const { slug } = await createTeam(api, owner);
    await addMember(api, slug, owner, admin, 'ADMIN');
    await addMember(api, slug, owner, member, 'MEMBER');
    await invite(owner, slug, guest.email, 'OWNER');
    const pending = await pendingFor(api, guest, slug);
    const resend = (token: string, id: number | string) => api.call('POST', `/api/teams/${slug}/invites/${id}/resend`, { token });
    expect((await resend(admin.token, pending.id)).status).toBe(403);
    expect((await resend(member.token, pending.id)).status).toBe(403);
    expect((await resend(owner.token, 123)).status).toBe(404);
    expect((await resend(owner.token, 'abc')).status).toBe(404);
    expect((await api.call('POST', `/api/invites/${pending.uuid}/accept`, { token: guest.token })).status).toBe(200);
    expect((await resend(owner.token, pending.id)).status).toBe(404);
  });

  it('asks the mailer to tell the inviter when an invite is declined', async () => {
    const [owner, guest] = [await signUp(api), await signUp(api)];
    const { slug } = await createTeam(api, owner);
    await invite(owner, slug, guest.email);
    const pending = await pendingFor(api, guest, slug);
    await api.call('POST', `/api/invites/${pending.uuid}/decline`, { token: guest.token });
    const messages = (
      await db()
        .entities.outboxMessage.scan.where((a, op) => op.eq(a.inviteUuid, pending.uuid))
        .go()
    ).data;
    expect(messages.map((m) => m.kind).sort()).toEqual(['declined', 'invitation']);
  });

  it('answers 404 for unknown and malformed invite ids', async () => {
    const owner = await signUp(api);
    const { slug } = await createTeam(api, owner);
    for (const path of [
      `/api/teams/${slug}/invites/123`,
      `/api/teams/${slug}/invites/abc`,
      '/api/invites/00000000-0000-4000-8000-000000000000',
      '/api/invites/not-a-uuid',
    ]) {
      const res = await api.call('GET', path, { token: owner.token });
      expect(res.status, path).toBe(404);
      expect(res.body.error.code).toBe('not_found');
    }
    expect((await api.call('POST', '/api/invites/not-a-uuid/accept', { token: owner.token })).status).toBe(404);
  });

  it.each([
    [{ email: 'not-an-email', role: 'MEMBER' }, 'email'],
    [{ email: 'a@b.co', role: 'member' }, 'role'],
    [{ email: 'a@b.co' }, 'role'],
    [{ role: 'MEMBER' }, 'email'],
    [{ email: `${'x'.repeat(250)}@b.co`, role: 'MEMBER' }, 'email'],
  ])('refuses an invite body %j with 422 on %s', async (json, field) => {
    const owner = await signUp(api);
    const { slug } = await createTeam(api, owner);
    const res = await api.call('POST', `/api/teams/${slug}/invites`, { token: owner.token, json });
    expect(res.status).toBe(422);
    expect(res.body.error.fields[field]).toBeDefined();
  });
});

describe('accept without the team item, and invites of a deleted team', () => {
  /** The TransactWriteItems that handlers send, as (operation, entity) pairs, while recording. */
  let transacted: string[][] | null = null;
  beforeAll(() => {
    db().documents.middlewareStack.add(
      (next, context) => (args) => {
        const input = args.input as { TransactItems?: Record<string, { Item?: Record<string, unknown>; Key?: Record<string, unknown> }>[] };
        if (transacted && context.commandName === 'TransactWriteItemsCommand') {
          transacted.push(
            (input.TransactItems ?? []).map((t) => {
              const [operation, body] = Object.entries(t)[0] as [string, { Item?: Record<string, unknown>; Key?: Record<string, unknown> }];
              // The sort key starts with the entity's name: `$invite_1`, `$pendinginvite_1#email_…`.
              return `${operation} ${/^\$([a-z]+)_/.exec(String((body.Item ?? body.Key)?.sk))?.[1]}`;
            }),
          );
        }
        return next(args);
      },
      { step: 'initialize', name: 'recordTransactions' },
    );
  });
  afterAll(() => db().documents.middlewareStack.remove('recordTransactions'));

  it('accept writes the team item only for an OWNER (ownerCount), with the same answers', async () => {
    const [owner, member, admin, second] = [await signUp(api), await signUp(api), await signUp(api), await signUp(api)];
    const team = await createTeam(api, owner);
    const before = (await db().entities.team.get({ teamId: team.id }).go({ consistent: true })).data;
    transacted = [];
    await addMember(api, team.slug, owner, member, 'MEMBER');
    await addMember(api, team.slug, owner, admin, 'ADMIN');
    const accepts = transacted.filter((ops) => ops.includes('Put membership'));
    // The user check: an account deleted meanwhile gets no membership. The audit entry rides along.
    const plain = ['Update invite', 'Delete pendinginvite', 'Put membership', 'Put idclaim', 'ConditionCheck user'];
    expect(accepts).toEqual([
      [...plain, 'Put auditentry'],
      [...plain, 'Put auditentry'],
    ]);
    expect((await db().entities.team.get({ teamId: team.id }).go({ consistent: true })).data).toEqual(before);

    transacted = [];
    await addMember(api, team.slug, owner, second, 'OWNER');
    expect(transacted.filter((ops) => ops.includes('Put membership'))).toEqual([[...plain, 'Update team', 'Put auditentry']]);
    transacted = null;
    expect((await db().entities.team.get({ teamId: team.id }).go({ consistent: true })).data?.ownerCount).toBe(2);
  });

  it('concurrent accepts to one team all succeed: no shared item to conflict on', async () => {
    const owner = await signUp(api);
    const team = await createTeam(api, owner);
    const guests = await Promise.all(Array.from({ length: 24 }, () => signUp(api)));
    for (const g of guests) expect((await invite(owner, team.slug, g.email)).status).toBe(201);
    const uuids = await Promise.all(guests.map(async (g) => (await pendingFor(api, g, team.slug)).uuid as string));
    const replies = await Promise.all(guests.map((g, n) => api.call('POST', `/api/invites/${uuids[n]}/accept`, { token: g.token })));
    expect(replies.map((r) => r.status)).toEqual(guests.map(() => 200));
    const members = await api.call('GET', `/api/teams/${team.slug}/members`, { token: owner.token });
    expect(members.body.data).toHaveLength(25);
  });

  it("a deleted team's invite answers 404 on accept, decline and preview, whatever the cleanup has reached", async () => {
    const [owner, guest, stranger] = [await signUp(api), await signUp(api), await signUp(api)];
    const { slug, id: teamId } = await createTeam(api, owner);
    await invite(owner, slug, guest.email);
    const pending = await pendingFor(api, guest, slug);
    const answers = async (user: TestUser) =>
      Promise.all(
        [
          ['POST', `/api/invites/${pending.uuid}/accept`],
          ['POST', `/api/invites/${pending.uuid}/decline`],
          ['GET', `/api/invites/${pending.uuid}`],
        ].map(async ([method, path]) => {
          const res = await api.call(method as 'GET' | 'POST', path as string, { token: user.token });
          return `${res.status} ${res.body.error?.code}`;
        }),
      );
    const notFound = ['404 not_found', '404 not_found', '404 not_found'];

    // The team item is gone, the cleanup has not started: the invite is still pending, its claim there.
    await db().entities.team.delete({ teamId }).go();
    expect(await answers(guest)).toEqual(notFound);
    // Expired meanwhile: still 404, not 410. Someone else is told only that it is not theirs.
    await expire(pending.uuid);
    expect(await answers(guest)).toEqual(notFound);
    expect(await answers(stranger)).toEqual(['403 invite_email_mismatch', '403 invite_email_mismatch', '403 invite_email_mismatch']);
    // The cleanup took the claim, then the invite.
    await db().entities.pendingInvite.delete({ teamId, email: guest.email }).go();
    expect(await answers(guest)).toEqual(notFound);
    await db().entities.invite.delete({ inviteUuid: pending.uuid }).go();
    expect(await answers(guest)).toEqual(notFound);
    const res = await api.call('POST', `/api/invites/${pending.uuid}/accept`, { token: guest.token });
    expect(res.body.error.message).toBe('No invite with that id.');
  });

  it('an invite that ended before its team was deleted is 404 too, not 409', async () => {
    const [owner, guest] = [await signUp(api), await signUp(api)];
    const { slug, id: teamId } = await createTeam(api, owner);
    await invite(owner, slug, guest.email);
    const pending = await pendingFor(api, guest, slug);
    expect((await api.call('POST', `/api/invites/${pending.uuid}/decline`, { token: guest.token })).status).toBe(200);
    await db().entities.team.delete({ teamId }).go();
    const res = await api.call('POST', `/api/invites/${pending.uuid}/accept`, { token: guest.token });
    expect([res.status, res.body.error.code, res.body.error.message]).toEqual([
      404,
      'not_found',
      'The team of this invite no longer exists.',
    ]);
  });

  it('a revoke that reads an invite a resend then renews revokes it as renewed (200), not 404', async () => {
    const [owner, guest] = [await signUp(api), await signUp(api)];
    const { slug } = await createTeam(api, owner);
    await invite(owner, slug, guest.email);
    const pending = await pendingFor(api, guest, slug);
    let resent = 0;
    const paused = pausedBeforeFirstWrite(async () => {
      resent = (await api.call('POST', `/api/teams/${slug}/invites/${pending.id}/resend`, { token: owner.token })).status;
    });
    await deleteInvite(paused, (await claimsOf(owner.token)).claims, slug, pending.id, new Date());
    expect(resent).toBe(200);
    expect((await db().entities.invite.get({ inviteUuid: pending.uuid }).go({ consistent: true })).data?.status).toBe('REVOKED');
  });

  /** Accepts as `guest` through the use case, with `meanwhile` run between its read and its write. */
  const acceptWith = async (guest: TestUser, uuid: string, meanwhile: () => Promise<void>) =>
    acceptInvite(pausedBeforeFirstWrite(meanwhile), (await claimsOf(guest.token)).claims, uuid, new Date()).then(
      () => null,
      (error: unknown) => error,
    );

  it("an account deleted between accept's read and its write gets no membership (401, nothing written)", async () => {
    const [owner, guest] = [await signUp(api), await signUp(api)];
    const { slug, id: teamId } = await createTeam(api, owner);
    await invite(owner, slug, guest.email);
    const pending = await pendingFor(api, guest, slug);
    const failed = await acceptWith(guest, pending.uuid, async () => {
      await db().entities.user.delete({ userUuid: guest.uuid }).go();
    });
    expect(failed).toBeInstanceOf(AppError);
    expect((failed as AppError).code).toBe('unauthorized');
    expect((await db().entities.membership.get({ teamId, userUuid: guest.uuid }).go({ consistent: true })).data).toBeNull();
    expect((await db().entities.invite.get({ inviteUuid: pending.uuid }).go({ consistent: true })).data?.status).toBe('PENDING');
  });

  it("a team deleted between accept's read and its write: the OWNER accept fails on the team, the others on the claim (404, nothing written)", async () => {
    for (const role of ['OWNER', 'MEMBER']) {
      const [owner, guest] = [await signUp(api), await signUp(api)];
      const { slug, id: teamId } = await createTeam(api, owner);
      await invite(owner, slug, guest.email, role);
      const pending = await pendingFor(api, guest, slug);
      const failed = await acceptWith(guest, pending.uuid, async () => {
        await db().entities.team.delete({ teamId }).go();
        // An OWNER accept is refused by the team item alone; for the others the cleanup's claim deletion is what bites.
        if (role !== 'OWNER') await db().entities.pendingInvite.delete({ teamId, email: guest.email }).go();
      });
      expect(failed, role).toBeInstanceOf(AppError);
      expect([(failed as AppError).code, (failed as AppError).message], role).toEqual([
        'not_found',
        'The team of this invite no longer exists.',
      ]);
      expect((await db().entities.membership.get({ teamId, userUuid: guest.uuid }).go({ consistent: true })).data, role).toBeNull();
      expect((await db().entities.invite.get({ inviteUuid: pending.uuid }).go({ consistent: true })).data?.status, role).toBe('PENDING');
    }
  });
});
