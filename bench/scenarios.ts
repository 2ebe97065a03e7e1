import { randomUUID, randomUUIDv7 } from 'node:crypto';
import { db } from '#lib/db/service.ts';
import { MAX_BULK_INVITES } from '#lib/wire/schemas.ts';
import { addDays, expirySeconds, isoMillis } from '#lib/core/time.ts';
import { TRANSFER_DAYS } from '#lib/teams/transfers.ts';
import type { UserItem } from '#lib/db/items.ts';
import type { BulkWriter } from './bulk-write.ts';
import { mfaScenarios } from './mfa-scenarios.ts';
import { domainScenarios } from './domain-scenarios.ts';
import { oauthScenarios } from './oauth-scenarios.ts';
import type { Bound } from './scale-model.ts';
import type { ApiRequest } from './invoke.ts';
import { addSyntheticMembers, inviteItems, storedUser, teamItems } from './items.ts';
import {
  type Account,
  type InviteRef,
  PASSWORD,
  type Team,
  createTeam,
  fresh,
  inParallel,
  invitationToken,
  unsubscribeToken,
  invite,
  join,
  mailedToken,
  mintSessions,
  myInvites,
  signUp,
  teamInvites,
  webhook,
} from './seed.ts';

/**
 * The state every endpoint is measured in ("steady state"), and for each endpoint the requests a
 * benchmark may send: reads repeat, writes that cannot repeat get a fresh input each time.
 */

export interface SteadyState {
  /** In 5 teams; OWNER of alpha and big. */
  owner: Account;
  /** 10 members: the owner and 9 people who joined by invite. 50 pending invites, one to `guest`. */
  alpha: Team;
  alphaInvites: InviteRef[];
  /** The owner and synthetic members: 8 whose roles change, the others removable. */
  big: Team;
  bigSize: number;
  roleTargets: number[];
  /** Shared by every part of the process: each removal takes its members out for good. */
  removable: number[];
  /** Has one pending invite (alpha's). */
  guest: Account;
  guestInvite: InviteRef;
}

const PENDING_INVITES = 50;
/** The large team of the capacity and warm-load parts. */
export const LARGE_TEAM = 10_000;

export const seedSteadyState = async (writer: BulkWriter, bigSize: number): Promise<SteadyState> => {
  const owner = await signUp('owner');
  const guest = await signUp('guest');
  const people = await inParallel(9, 2, () => signUp('member'));
  const alpha = await createTeam(owner, 'alpha');
  const big = await createTeam(owner, 'big');
  for (const name of ['beta', 'gamma', 'delta']) await createTeam(owner, name);
  await inParallel(people.length, 4, (i) => join(owner, alpha, people[i] as Account));
  await invite(owner, alpha.slug, guest.email);
  await inParallel(PENDING_INVITES - 1, 4, () => invite(owner, alpha.slug, `${fresh('invitee')}@example.com`));
  const synthetic = await addSyntheticMembers(writer, big.id, 0, bigSize - 1);
  const [guestInvite] = await myInvites(guest);
  if (!guestInvite) throw new Error('seed: the guest has no invite');
  return {
    owner,
    alpha,
    alphaInvites: await teamInvites(owner, alpha.slug),
    big,
    bigSize,
    roleTargets: synthetic.slice(0, 8),
    removable: synthetic.slice(8),
    guest,
    guestInvite,
  };
};

export interface Scenario {
  /** The row: method, route, and the state it meets. */
  label: string;
  /** Its function in functions/. */
  name: string;
  /** The answer of a successful call. */
  status: number;
  /** Hashes a password with argon2id: about 45 ms by design. */
  hashes?: true;
  /** Its hottest key when not the route's own (bench/scale-model.ts BOUNDS): a replay does none of the route's work. */
  bound?: Bound;
  /** Makes `count` calls possible; then request(i) for i < count (undefined when a pool is used up). */
  prepare: (count: number) => Promise<(i: number) => ApiRequest | undefined>;
}

/**
 * Accounts made ahead for calls that each use one up and hash a password (deletion, reset): a
 * sign-up hashes too, and a loaded run of hashing calls ends well before this many.
 */
const HASHING_POOL = 200;

const repeat = (req: ApiRequest) => async () => () => req;
const from =
  <T>(pool: readonly T[], make: (item: T) => ApiRequest) =>
  (i: number) => {
    const item = pool[i];
    return item === undefined ? undefined : make(item);
  };
const newEmail = (name: string): string => `${fresh(name)}@example.com`;

/** `count` pending invites to `who`, each from a team of its own (an account joins a team once). */
const invitesTo = async (writer: BulkWriter, who: Account, count: number): Promise<string[]> => {
  const host = await storedUser((await signUp('host')).uuid);
  const now = new Date();
  const invites = Array.from({ length: count }, () => {
    const team = teamItems(host, fresh('host'), now);
    const invitation = inviteItems(team.teamId, who.email, host, now);
    return { uuid: invitation.inviteUuid, items: [...team.items, ...invitation.items] };
  });
  await writer.write(invites.flatMap((i) => i.items));
  return invites.map((i) => i.uuid);
};

/** Teams with their owner only, to rename or delete. */
const ownTeams = async (name: string, count: number): Promise<{ owner: Account; teams: Team[] }> => {
  const owner = await signUp(name);
  return { owner, teams: await inParallel(count, 8, () => createTeam(owner, name)) };
};

const ownTeam = async (name: string): Promise<{ owner: Account; team: Team }> => {
  const owner = await signUp(name);
  return { owner, team: await createTeam(owner, name) };
};

/** Attempts in a benchmarked delivery log: a page of a busy endpoint's. */
const DELIVERY_LOG = 20;

/** A team with one webhook endpoint, and the audit entry of its registration (the event its attempts name). */
const hookedTeam = async (name: string) => {
  const { owner: by, team } = await ownTeam(name);
  const endpointId = await webhook(by, team.slug, 0);
  const { data } = await db().entities.auditEntry.query.byAction({ teamId: team.id, action: 'webhook.created' }).go();
  const entryId = data[0]?.entryId;
  if (!entryId) throw new Error('seed: no webhook.created entry');
  return { by, team, endpointId, entryId };
};

/** A failed attempt in an endpoint's delivery log, as the delivery function writes one; its id. */
const logAttempt = async (teamId: number, endpointId: number, entryId: string, attempt: number): Promise<string> => {
  const deliveryId = randomUUIDv7();
  const now = new Date();
  await db()
    .entities.webhookDelivery.put({
      teamId,
      endpointId,
      deliveryId,
      entryId,
      action: 'webhook.created',
      attempt,
      replay: false,
      succeeded: false,
      responseStatus: 503,
      error: 'answered 503',
      durationMs: 120,
      createdAt: isoMillis(now),
      nextAttemptAt: isoMillis(new Date(now.getTime() + 300_000)),
      ttl: expirySeconds(addDays(now, 30)),
    })
    .go();
  return deliveryId;
};

/** Synthetic members of the nominating teams, numbered past the large team's. */
let nextSynthetic = 100_000_000;
/** Ids of the nominees' memberships written here (below 2^53, far from lib/core/ids.ts's and bench/items.ts's). */
let nextMemberId = 8e15;

/**
 * `count` teams of `nominator`, each with `nominee` as a MEMBER and an open transfer to them, as
 * createTransfer leaves it (its outbox message aside: no mailer runs here). Returns the slugs.
 */
const openTransfers = async (writer: BulkWriter, nominator: UserItem, nominee: UserItem, count: number): Promise<string[]> => {
  const now = new Date();
  const stamp = isoMillis(now);
  const expires = addDays(now, TRANSFER_DAYS);
  const e = db().entities;
  const itemOf = (params: unknown) => (params as { Item: Record<string, unknown> }).Item;
  const teams = Array.from({ length: count }, () => {
    const slug = fresh('handover');
    const team = teamItems(nominator, slug, now);
    const owner = team.items.find((i) => i.__edb_e__ === 'membership') as { memberId: number };
    const memberId = ++nextMemberId;
    const items = [
      ...team.items,
      itemOf(
        e.membership
          .put({
            teamId: team.teamId,
            userUuid: nominee.userUuid,
            memberId,
            userId: nominee.userId,
            role: 'MEMBER',
            createdAt: stamp,
            updatedAt: stamp,
          })
          .params(),
      ),
      itemOf(
        e.transfer
          .put({
            teamId: team.teamId,
            transferId: randomUUID(),
            nomineeUserUuid: nominee.userUuid,
            nomineeMemberId: memberId,
            nomineeUserId: nominee.userId,
            nomineeRole: 'MEMBER',
            nominatorUserUuid: nominator.userUuid,
            nominatorMemberId: owner.memberId,
            nominatorUserId: nominator.userId,
            createdAt: stamp,
            expiresAt: isoMillis(expires),
            ttl: expirySeconds(expires),
          })
          .params(),
      ),
    ];
    return { slug, items };
  });
  await writer.write(teams.flatMap((t) => t.items));
  return teams.map((t) => t.slug);
};

/** A pool of open transfers whose nominee (accept, decline) or nominator (cancel) is `caller`, a fresh account. */
const transfersFor = async (writer: BulkWriter, side: 'nominee' | 'nominator', count: number) => {
  const [caller, counterpart] = await Promise.all([signUp(side), signUp('counterpart')]);
  const [me, them] = await Promise.all([storedUser(caller.uuid), storedUser(counterpart.uuid)]);
  const slugs = side === 'nominee' ? await openTransfers(writer, them, me, count) : await openTransfers(writer, me, them, count);
  return { caller, slugs };
};

/**
 * Every route (members-list twice: a small and a large team) plus the fallback. A route added
 * since is reported as without a scenario (bench/report.ts), not measured.
 */
export const scenarios = (s: SteadyState, writer: BulkWriter): Scenario[] => {
  const { owner, alpha, big, guest } = s;
  const bigSize = s.bigSize.toLocaleString('en-US');
  return [
    {
      label: 'POST /api/auth/signup',
      name: 'auth-signup',
      status: 201,
      hashes: true,
      prepare: async () => () => ({
        method: 'POST',
        path: '/api/auth/signup',
        json: { email: newEmail('signup'), password: PASSWORD, firstName: 'New', lastName: 'User' },
      }),
    },
    {
      label: 'POST /api/auth/signin',
      name: 'auth-signin',
      status: 200,
      hashes: true,
      prepare: async () => {
        const user = await signUp('signin');
        return () => ({ method: 'POST', path: '/api/auth/signin', json: { email: user.email, password: PASSWORD } });
      },
    },
    {
      label: 'POST /api/auth/refresh',
      name: 'auth-refresh',
      status: 200,
      prepare: async (count) =>
        from(await mintSessions(await signUp('refresh'), count), (session) => ({
          method: 'POST',
          path: '/api/auth/refresh',
          json: { refresh_token: session.refreshToken },
        })),
    },
    {
      label: 'POST /api/auth/signout',
      name: 'auth-signout',
      status: 200,
      prepare: async (count) =>
        from(await mintSessions(await signUp('signout'), count), (session) => ({
          method: 'POST',
          path: '/api/auth/signout',
          token: session.token,
        })),
    },
    {
      label: 'GET /api/auth/user',
      name: 'auth-user',
      status: 200,
      prepare: repeat({ method: 'GET', path: '/api/auth/user', token: owner.token }),
    },
    {
      label: 'PUT /api/auth/user (name)',
      name: 'auth-user-update',
      status: 200,
      prepare: async () => (i) => ({ method: 'PUT', path: '/api/auth/user', token: owner.token, json: { firstName: `Owner ${i}` } }),
    },
    {
      label: 'DELETE /api/auth/user (no teams)',
      name: 'auth-user-delete',
      status: 200,
      hashes: true,
      // Each call deletes an account: one sign-up (a password hash) per call, made beforehand.
      prepare: async (count) =>
        from(await inParallel(Math.min(count, HASHING_POOL), 4, () => signUp('leaver', { confirmed: false })), (leaver) => ({
          method: 'DELETE',
          path: '/api/auth/user',
          token: leaver.token,
          json: { currentPassword: PASSWORD },
        })),
    },
    {
      label: 'POST /api/auth/verify',
      name: 'auth-verify',
      status: 200,
      // Tokens of one account's confirmation links: the first confirms, the others keep that time.
      prepare: async (count) => {
        const user = await signUp('verify', { confirmed: false });
        return from(await inParallel(count, 8, () => mailedToken('verification', user)), (token) => ({
          method: 'POST',
          path: '/api/auth/verify',
          json: { token },
        }));
      },
    },
    {
      label: 'POST /api/auth/verify/resend',
      name: 'auth-verify-resend',
      status: 200,
      prepare: async () => {
        const user = await signUp('resend', { confirmed: false });
        return () => ({ method: 'POST', path: '/api/auth/verify/resend', token: user.token });
      },
    },
    {
      label: 'POST /api/auth/recover',
      name: 'auth-recover',
      status: 200,
      prepare: async () => {
        const user = await signUp('recover');
        return () => ({ method: 'POST', path: '/api/auth/recover', json: { email: user.email } });
      },
    },
    {
      label: 'POST /api/auth/reset',
      name: 'auth-reset',
      status: 200,
      hashes: true,
      // Each reset ends the account's other sessions (the one the previous reset opened) and bumps
      // its token epoch, so each call gets an account of its own.
      prepare: async (count) => {
        const users = await inParallel(Math.min(count, HASHING_POOL), 4, () => signUp('reset'));
        const tokens = await Promise.all(users.map((u) => mailedToken('recovery', u)));
        return from(tokens, (token) => ({ method: 'POST', path: '/api/auth/reset', json: { token, password: `${PASSWORD} again` } }));
      },
    },
    {
      label: 'GET /api/auth/sessions',
      name: 'auth-sessions-list',
      status: 200,
      prepare: repeat({ method: 'GET', path: '/api/auth/sessions', token: owner.token }),
    },
    {
      label: 'DELETE /api/auth/sessions/{id}',
      name: 'auth-sessions-delete',
      status: 200,
      prepare: async (count) => {
        const user = await signUp('revoke');
        return from(await mintSessions(user, count), (session) => ({
          method: 'DELETE',
          path: `/api/auth/sessions/${session.sessionId}`,
          token: user.token,
        }));
      },
    },
    ...mfaScenarios(),
    ...oauthScenarios(),
    ...domainScenarios(),
    { label: 'GET /.well-known/jwks.json', name: 'jwks', status: 200, prepare: repeat({ method: 'GET', path: '/.well-known/jwks.json' }) },
    {
      label: 'GET /.well-known/openid-configuration',
      name: 'openid-configuration',
      status: 200,
      prepare: repeat({ method: 'GET', path: '/.well-known/openid-configuration' }),
    },
    // The Supabase-compatible routes (lib/gotrue/): the same use cases as their /api twins.
    {
      label: 'POST /auth/v1/signup',
      name: 'gotrue-signup',
      status: 200,
      hashes: true,
      prepare: async () => () => ({
        method: 'POST',
        path: '/auth/v1/signup',
        json: { email: newEmail('gotrue-signup'), password: PASSWORD, data: { firstName: 'New', lastName: 'User' } },
      }),
    },
    {
      label: 'POST /auth/v1/token?grant_type=password',
      name: 'gotrue-token',
      status: 200,
      hashes: true,
      prepare: async () => {
        const user = await signUp('gotrue-signin');
        return () => ({ method: 'POST', path: '/auth/v1/token?grant_type=password', json: { email: user.email, password: PASSWORD } });
      },
    },
    {
      label: 'POST /auth/v1/token?grant_type=refresh_token',
      name: 'gotrue-token',
      status: 200,
      prepare: async (count) =>
        from(await mintSessions(await signUp('gotrue-refresh'), count), (session) => ({
          method: 'POST',
          path: '/auth/v1/token?grant_type=refresh_token',
          json: { refresh_token: session.refreshToken },
        })),
    },
    {
      label: 'GET /auth/v1/user',
      name: 'gotrue-user',
      status: 200,
      prepare: repeat({ method: 'GET', path: '/auth/v1/user', token: owner.token }),
    },
    {
      label: 'PUT /auth/v1/user (data)',
      name: 'gotrue-user-update',
      status: 200,
      prepare: async () => (i) => ({
        method: 'PUT',
        path: '/auth/v1/user',
        token: owner.token,
        json: { data: { firstName: `Owner ${i}` } },
      }),
    },
    {
      label: 'POST /auth/v1/logout?scope=local',
      name: 'gotrue-logout',
      status: 200,
      prepare: async (count) =>
        from(await mintSessions(await signUp('gotrue-logout'), count), (session) => ({
          method: 'POST',
          path: '/auth/v1/logout?scope=local',
          token: session.token,
        })),
    },
    {
      label: 'POST /auth/v1/recover',
      name: 'gotrue-recover',
      status: 200,
      prepare: async () => {
        const user = await signUp('gotrue-recover');
        return () => ({ method: 'POST', path: '/auth/v1/recover', json: { email: user.email } });
      },
    },
    {
      label: 'POST /auth/v1/resend (signup)',
      name: 'gotrue-resend',
      status: 200,
      prepare: async () => {
        const user = await signUp('gotrue-resend', { confirmed: false });
        return () => ({ method: 'POST', path: '/auth/v1/resend', json: { type: 'signup', email: user.email } });
      },
    },
    {
      label: 'POST /auth/v1/verify (signup)',
      name: 'gotrue-verify',
      status: 200,
      // Tokens of one account's confirmation links: each confirms (the first) and opens a session.
      prepare: async (count) => {
        const user = await signUp('gotrue-verify', { confirmed: false });
        return from(await inParallel(count, 8, () => mailedToken('verification', user)), (token) => ({
          method: 'POST',
          path: '/auth/v1/verify',
          json: { type: 'signup', token_hash: token },
        }));
      },
    },
    {
      label: 'GET /auth/v1/.well-known/jwks.json',
      name: 'gotrue-jwks',
      status: 200,
      prepare: repeat({ method: 'GET', path: '/auth/v1/.well-known/jwks.json' }),
    },
    { label: 'GET /auth/v1/settings', name: 'gotrue-settings', status: 200, prepare: repeat({ method: 'GET', path: '/auth/v1/settings' }) },
    {
      label: 'GET /api/teams (5 teams)',
      name: 'teams-list',
      status: 200,
      prepare: repeat({ method: 'GET', path: '/api/teams', token: owner.token }),
    },
    {
      label: 'POST /api/teams',
      name: 'teams-create',
      status: 201,
      prepare: async () => {
        const creator = await signUp('creator');
        return () => {
          const slug = fresh('new');
          return { method: 'POST', path: '/api/teams', token: creator.token, json: { name: `Team ${slug}`, slug } };
        };
      },
    },
    {
      label: 'GET /api/teams/{slug}',
      name: 'teams-get',
      status: 200,
      prepare: repeat({ method: 'GET', path: `/api/teams/${alpha.slug}`, token: owner.token }),
    },
    {
      label: 'PUT /api/teams/{slug} (name)',
      name: 'teams-update',
      status: 200,
      // Concurrent renames of one team would conflict (409 by design): each in-flight request has its own team.
      prepare: async () => {
        const { owner: updater, teams } = await ownTeams('rename', 8);
        return (i) => {
          const team = teams[i % teams.length] as Team;
          return { method: 'PUT', path: `/api/teams/${team.slug}`, token: updater.token, json: { name: `Renamed ${i}`, slug: team.slug } };
        };
      },
    },
    {
      label: 'DELETE /api/teams/{slug}',
      name: 'teams-delete',
      status: 200,
      prepare: async (count) => {
        const deleter = await signUp('doomed');
        const owner = await storedUser(deleter.uuid);
        const slugs = Array.from({ length: count }, () => fresh('doomed'));
        await writer.write(slugs.flatMap((slug) => teamItems(owner, slug, new Date()).items));
        return from(slugs, (slug) => ({ method: 'DELETE', path: `/api/teams/${slug}`, token: deleter.token }));
      },
    },
    {
      label: 'GET /api/teams/{slug}/members (10)',
      name: 'members-list',
      status: 200,
      prepare: repeat({ method: 'GET', path: `/api/teams/${alpha.slug}/members`, token: owner.token }),
    },
    {
      label: `GET /api/teams/{slug}/members (${bigSize}, page of 100)`,
      name: 'members-list',
      status: 200,
      prepare: repeat({ method: 'GET', path: `/api/teams/${big.slug}/members`, token: owner.token }),
    },
    {
      label: `PUT /api/teams/{slug}/members/{id} (of ${bigSize})`,
      name: 'members-update-role',
      status: 200,
      // Eight members take turns, each flipping between ADMIN and MEMBER, so every call writes.
      prepare: async () => (i) => ({
        method: 'PUT',
        path: `/api/teams/${big.slug}/members/${s.roleTargets[i % s.roleTargets.length]}`,
        token: owner.token,
        json: { role: Math.floor(i / 8) % 2 === 0 ? 'ADMIN' : 'MEMBER' },
      }),
    },
    {
      label: `DELETE /api/teams/{slug}/members/{id} (of ${bigSize})`,
      name: 'members-remove',
      status: 200,
      prepare: async (count) =>
        from(s.removable.splice(-count), (id) => ({ method: 'DELETE', path: `/api/teams/${big.slug}/members/${id}`, token: owner.token })),
    },
    {
      label: 'POST /api/teams/{slug}/transfer (replacing the open one)',
      name: 'transfer-create',
      status: 201,
      // Like renames: one team per in-flight request, each with a member to nominate again and again.
      prepare: async () => {
        const { owner: nominator, teams } = await ownTeams('nominating', 8);
        const nominees = await Promise.all(teams.map((team) => addSyntheticMembers(writer, team.id, nextSynthetic++, 1)));
        return (i) => {
          const n = i % teams.length;
          return {
            method: 'POST',
            path: `/api/teams/${(teams[n] as Team).slug}/transfer`,
            token: nominator.token,
            json: { memberId: nominees[n]?.[0] },
          };
        };
      },
    },
    {
      label: 'POST /api/teams/{slug}/transfer/accept',
      name: 'transfer-accept',
      status: 200,
      prepare: async (count) => {
        const { caller, slugs } = await transfersFor(writer, 'nominee', count);
        return from(slugs, (slug) => ({ method: 'POST', path: `/api/teams/${slug}/transfer/accept`, token: caller.token }));
      },
    },
    {
      label: 'POST /api/teams/{slug}/transfer/decline',
      name: 'transfer-decline',
      status: 200,
      prepare: async (count) => {
        const { caller, slugs } = await transfersFor(writer, 'nominee', count);
        return from(slugs, (slug) => ({ method: 'POST', path: `/api/teams/${slug}/transfer/decline`, token: caller.token }));
      },
    },
    {
      label: 'DELETE /api/teams/{slug}/transfer',
      name: 'transfer-cancel',
      status: 200,
      prepare: async (count) => {
        const { caller, slugs } = await transfersFor(writer, 'nominator', count);
        return from(slugs, (slug) => ({ method: 'DELETE', path: `/api/teams/${slug}/transfer`, token: caller.token }));
      },
    },
    {
      label: 'POST /api/teams/{slug}/invites',
      name: 'invites-create',
      status: 201,
      prepare: async () => {
        const { owner: inviter, team } = await ownTeam('outreach');
        return () => ({
          method: 'POST',
          path: `/api/teams/${team.slug}/invites`,
          token: inviter.token,
          json: { email: newEmail('invitee'), role: 'MEMBER' },
        });
      },
    },
    {
      label: 'POST /api/teams/{slug}/invites with a new Idempotency-Key',
      name: 'invites-create',
      status: 201,
      prepare: async () => {
        const { owner: inviter, team } = await ownTeam('keyed');
        return () => ({
          method: 'POST',
          path: `/api/teams/${team.slug}/invites`,
          token: inviter.token,
          json: { email: newEmail('invitee'), role: 'MEMBER' },
          idempotencyKey: fresh('key'),
        });
      },
    },
    {
      label: 'POST /api/teams/{slug}/invites, replayed by its Idempotency-Key',
      name: 'invites-create',
      status: 201,
      // Every call sends the first one's key and body: all but the first are replays.
      bound: {
        key: "the caller's Idempotency-Key record (its failed conditional put: 1 WCU on DynamoDB, none reported by DynamoDB Local)",
        per: 'user',
        rcu: 0,
        wcu: 0,
      },
      prepare: async () => {
        const { owner: inviter, team } = await ownTeam('replayed');
        const json = { email: newEmail('invitee'), role: 'MEMBER' };
        return repeat({
          method: 'POST',
          path: `/api/teams/${team.slug}/invites`,
          token: inviter.token,
          json,
          idempotencyKey: fresh('key'),
        })();
      },
    },
    // The most a call takes (a 1-row call costs what POST …/invites does; bench/scale-model.ts has
    // one bound per route): every call invites new addresses.
    {
      label: `POST /api/teams/{slug}/invites/bulk (${MAX_BULK_INVITES} rows)`,
      name: 'invites-bulk',
      status: 200,
      prepare: async () => {
        const { owner: inviter, team } = await ownTeam('bulk');
        return () => ({
          method: 'POST',
          path: `/api/teams/${team.slug}/invites/bulk`,
          token: inviter.token,
          json: { invites: Array.from({ length: MAX_BULK_INVITES }, () => ({ email: newEmail('bulk'), role: 'MEMBER' })) },
        });
      },
    },
    {
      label: `GET /api/teams/{slug}/invites (${PENDING_INVITES})`,
      name: 'invites-list',
      status: 200,
      prepare: repeat({ method: 'GET', path: `/api/teams/${alpha.slug}/invites`, token: owner.token }),
    },
    {
      label: 'GET /api/teams/{slug}/audit (its first 60 entries: creation, joins, invites)',
      name: 'audit-list',
      status: 200,
      prepare: repeat({ method: 'GET', path: `/api/teams/${alpha.slug}/audit`, token: owner.token }),
    },
    {
      label: 'POST /api/teams/{slug}/webhooks',
      name: 'webhooks-create',
      status: 201,
      // At most WEBHOOKS_PER_TEAM (10) a team: a team of its own for each ten calls.
      prepare: async (count) => {
        const { owner: by, teams } = await ownTeams('hooked', Math.ceil(count / 10));
        return (i) => ({
          method: 'POST',
          path: `/api/teams/${teams[Math.floor(i / 10)]?.slug}/webhooks`,
          token: by.token,
          json: { url: `https://192.0.32.10/hook/${i}`, events: ['invite.created', 'member.removed'] },
        });
      },
    },
    {
      label: 'GET /api/teams/{slug}/webhooks (3)',
      name: 'webhooks-list',
      status: 200,
      prepare: async () => {
        const { owner: by, team } = await ownTeam('listed');
        for (let n = 0; n < 3; n++) await webhook(by, team.slug, n);
        return repeat({ method: 'GET', path: `/api/teams/${team.slug}/webhooks`, token: by.token })();
      },
    },
    {
      label: 'DELETE /api/teams/{slug}/webhooks/{id}',
      name: 'webhooks-delete',
      status: 200,
      prepare: async (count) => {
        const { owner: by, teams } = await ownTeams('unhooked', Math.ceil(count / 10));
        const hooks = await inParallel(count, 4, async (i) => {
          const slug = (teams[Math.floor(i / 10)] as Team).slug;
          return { slug, id: await webhook(by, slug, i) };
        });
        return from(hooks, ({ slug, id }) => ({ method: 'DELETE', path: `/api/teams/${slug}/webhooks/${id}`, token: by.token }));
      },
    },
    {
      label: `GET /api/teams/{slug}/webhooks/{id}/deliveries (${DELIVERY_LOG} attempts)`,
      name: 'webhooks-deliveries',
      status: 200,
      prepare: async () => {
        const { by, team, endpointId, entryId } = await hookedTeam('logged');
        await inParallel(DELIVERY_LOG, 4, (n) => logAttempt(team.id, endpointId, entryId, n + 1));
        return repeat({ method: 'GET', path: `/api/teams/${team.slug}/webhooks/${endpointId}/deliveries`, token: by.token })();
      },
    },
    {
      label: 'POST /api/teams/{slug}/webhooks/{id}/deliveries/{deliveryId}/replay',
      name: 'webhooks-replay',
      status: 200,
      prepare: async () => {
        // It sends to the webhook queue: a local one that only holds what it is sent (the delivery is not measured here).
        (await import('#infra/local-queue.ts')).startLocalQueue('webhook', { receive: false });
        const { by, team, endpointId, entryId } = await hookedTeam('replayed');
        const deliveryId = await logAttempt(team.id, endpointId, entryId, 1);
        return repeat({
          method: 'POST',
          path: `/api/teams/${team.slug}/webhooks/${endpointId}/deliveries/${deliveryId}/replay`,
          token: by.token,
        })();
      },
    },
    {
      label: 'GET /api/teams/{slug}/invites/{id}',
      name: 'invites-get',
      status: 200,
      prepare: repeat({ method: 'GET', path: `/api/teams/${alpha.slug}/invites/${s.alphaInvites[0]?.id}`, token: owner.token }),
    },
    {
      label: 'POST /api/teams/{slug}/invites/{id}/resend',
      name: 'invites-resend',
      status: 200,
      // Like renames: one invite per in-flight request.
      prepare: async () => {
        const { owner: inviter, team } = await ownTeam('resend');
        await inParallel(8, 4, () => invite(inviter, team.slug, newEmail('resent')));
        const invites = await teamInvites(inviter, team.slug);
        return (i) => ({
          method: 'POST',
          path: `/api/teams/${team.slug}/invites/${invites[i % invites.length]?.id}/resend`,
          token: inviter.token,
        });
      },
    },
    {
      label: 'DELETE /api/teams/{slug}/invites/{id}',
      name: 'invites-delete',
      status: 200,
      prepare: async (count) => {
        const { owner: inviter, team } = await ownTeam('revoke');
        const user = await storedUser(inviter.uuid);
        const invites = Array.from({ length: count }, () => inviteItems(team.id, newEmail('revoked'), user, new Date()));
        await writer.write(invites.flatMap((i) => i.items));
        return from(invites, (i) => ({ method: 'DELETE', path: `/api/teams/${team.slug}/invites/${i.inviteId}`, token: inviter.token }));
      },
    },
    {
      label: 'GET /api/invites',
      name: 'my-invites-list',
      status: 200,
      prepare: repeat({ method: 'GET', path: '/api/invites', token: guest.token }),
    },
    {
      label: 'GET /api/invites/{uuid}',
      name: 'my-invites-get',
      status: 200,
      prepare: repeat({ method: 'GET', path: `/api/invites/${s.guestInvite.uuid}`, token: guest.token }),
    },
    {
      label: 'POST /api/invites/{uuid}/accept',
      name: 'invites-accept',
      status: 200,
      prepare: async (count) => {
        const joiner = await signUp('joiner');
        return from(await invitesTo(writer, joiner, count), (uuid) => ({
          method: 'POST',
          path: `/api/invites/${uuid}/accept`,
          token: joiner.token,
        }));
      },
    },
    {
      label: 'POST /api/invites/{uuid}/decline',
      name: 'invites-decline',
      status: 200,
      prepare: async (count) => {
        const decliner = await signUp('decliner');
        return from(await invitesTo(writer, decliner, count), (uuid) => ({
          method: 'POST',
          path: `/api/invites/${uuid}/decline`,
          token: decliner.token,
        }));
      },
    },
    { label: 'GET /api/openapi.json', name: 'openapi', status: 200, prepare: repeat({ method: 'GET', path: '/api/openapi.json' }) },
    { label: 'GET /docs', name: 'docs', status: 200, prepare: repeat({ method: 'GET', path: '/docs' }) },
    // start.js is made in memory; the Swagger UI files are read from beside the bundle, which only the stack puts there.
    { label: 'GET /docs/{asset} (start.js)', name: 'docs-assets', status: 200, prepare: repeat({ method: 'GET', path: '/docs/start.js' }) },
    {
      label: 'GET /invites/{uuid}?token= (page)',
      name: 'page-invite',
      status: 200,
      prepare: async () => {
        const token = await invitationToken(s.guestInvite);
        return () => ({ method: 'GET', path: `/invites/${s.guestInvite.uuid}?token=${token}` });
      },
    },
    {
      label: 'GET /verify (page)',
      name: 'page-verify',
      status: 200,
      prepare: repeat({ method: 'GET', path: '/verify?token=Vt7bS0aN2mW1pQ4xY8zR3cE6fH9jK5lU0oI2dA7sG1e' }),
    },
    {
      label: 'GET /reset (page)',
      name: 'page-reset',
      status: 200,
      prepare: repeat({ method: 'GET', path: '/reset?token=Vt7bS0aN2mW1pQ4xY8zR3cE6fH9jK5lU0oI2dA7sG1e' }),
    },
    {
      label: 'GET /unsubscribe (page)',
      name: 'page-unsubscribe',
      status: 200,
      prepare: async () => {
        const token = await unsubscribeToken(s.guestInvite.email, s.alpha.id);
        return () => ({ method: 'GET', path: `/unsubscribe?token=${token}` });
      },
    },
    {
      label: 'POST /unsubscribe (one click)',
      name: 'unsubscribe',
      status: 200,
      // Each call blocks another address (a block already in place writes nothing).
      prepare: async () => {
        const tokens = await Promise.all(
          Array.from({ length: 400 }, (_, n) => unsubscribeToken(`blocked-${n}-${s.guestInvite.uuid}@example.com`, s.alpha.id)),
        );
        return () => ({ method: 'POST', path: `/unsubscribe?token=${tokens.pop() ?? ''}`, form: 'List-Unsubscribe=One-Click' });
      },
    },
    {
      label: 'GET /assets/{asset} (page.js)',
      name: 'page-assets',
      status: 200,
      prepare: repeat({ method: 'GET', path: '/assets/page.js' }),
    },
    {
      label: 'GET /api/no-such-route (fallback)',
      name: 'fallback',
      status: 404,
      prepare: repeat({ method: 'GET', path: '/api/no-such-route' }),
    },
  ];
};
