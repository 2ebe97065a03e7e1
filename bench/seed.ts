import { issueToken } from '#lib/auth/account-tokens.ts';
import { newSession } from '#lib/auth/sessions.ts';
import { db } from '#lib/db/service.ts';
import { type ApiRequest, type Reply, callDirect, expectStatus } from './invoke.ts';
import { storedUser } from './items.ts';

/**
 * Building state through the API: the handlers, called in this process. Where thousands of things
 * are needed, bench/items.ts writes them as items instead.
 */

export const PASSWORD = 'correct horse battery staple';

export interface Account {
  email: string;
  token: string;
  refreshToken: string;
  uuid: string;
}

export interface Team {
  slug: string;
  id: number;
}

let unique = 0;
/** A name no earlier call of this process gave (e-mails, slugs). */
export const fresh = (prefix: string): string => `${prefix}-${Date.now().toString(36)}-${++unique}`;

const call = (req: ApiRequest, status: number, what: string): Promise<Reply> =>
  callDirect(req).then((reply) => expectStatus(reply, status, what));

/** Runs `task(0..count-1)` with at most `concurrency` at a time. */
export const inParallel = async <T>(count: number, concurrency: number, task: (i: number) => Promise<T>): Promise<T[]> => {
  const results: T[] = new Array(count);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < count; i = next++) results[i] = await task(i);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  return results;
};

/** The token of an invitation e-mail's link, made as the mailer makes it (without the e-mail). */
export const invitationToken = (invite: InviteRef): Promise<string> =>
  issueToken(db(), { purpose: 'invitation', email: invite.email, inviteUuid: invite.uuid, expiresAt: invite.expiresAt }, new Date());

/** The token of an invitation's or nomination's "no more" link, made as the mailer makes it. */
export const unsubscribeToken = (email: string, teamId: number): Promise<string> =>
  issueToken(db(), { purpose: 'unsubscribe', email, teamId }, new Date());

/** A token of a mailed link, made as the mailer makes it (without the e-mail). */
export const mailedToken = (purpose: 'verification' | 'recovery', account: Pick<Account, 'email' | 'uuid'>): Promise<string> =>
  issueToken(db(), { purpose, email: account.email, user: { userUuid: account.uuid, tokenEpoch: 0 } }, new Date());

/** An account; confirmed (as its owner would, through POST /api/auth/verify) unless told otherwise. */
export const signUp = async (name: string, { confirmed = true, domain = 'example.com' } = {}): Promise<Account> => {
  const email = `${fresh(name)}@${domain}`;
  const { body } = await call(
    { method: 'POST', path: '/api/auth/signup', json: { email, password: PASSWORD, firstName: name, lastName: 'Bench' } },
    201,
    'sign-up',
  );
  const { session } = body.data;
  const account = { email, token: session.access_token, refreshToken: session.refresh_token, uuid: session.user.id };
  if (confirmed)
    await call({ method: 'POST', path: '/api/auth/verify', json: { token: await mailedToken('verification', account) } }, 200, 'verify');
  return account;
};

export const createTeam = async (owner: Account, name = 'team'): Promise<Team> => {
  const slug = fresh(name);
  const { body } = await call(
    { method: 'POST', path: '/api/teams', token: owner.token, json: { name: `Team ${slug}`, slug } },
    201,
    'create team',
  );
  return { slug, id: body.data.id };
};

/** A webhook endpoint of the team (a public literal address: nothing is resolved or sent); its id. */
export const webhook = async (by: Account, slug: string, n: number): Promise<number> =>
  (
    await call(
      {
        method: 'POST',
        path: `/api/teams/${slug}/webhooks`,
        token: by.token,
        json: { url: `https://192.0.32.10/hook/${n}`, events: ['team.updated'] },
      },
      201,
      'webhook',
    )
  ).body.data.id as number;

export const invite = (by: Account, slug: string, email: string, role = 'MEMBER'): Promise<Reply> =>
  call({ method: 'POST', path: `/api/teams/${slug}/invites`, token: by.token, json: { email, role } }, 201, 'invite');

export interface InviteRef {
  id: number;
  uuid: string;
  team: { slug: string };
  email: string;
  expiresAt: string;
}

/** The team's pending invites (up to 1000). */
export const teamInvites = async (by: Account, slug: string): Promise<InviteRef[]> =>
  (await call({ method: 'GET', path: `/api/teams/${slug}/invites?limit=1000`, token: by.token }, 200, 'list invites')).body.data;

/** The invitee's pending invites (up to 1000). */
export const myInvites = async (who: Account): Promise<InviteRef[]> =>
  (await call({ method: 'GET', path: '/api/invites?limit=1000', token: who.token }, 200, 'my invites')).body.data;

/** Invites `who` into the team and accepts, as a person would. */
export const join = async (owner: Account, team: Team, who: Account): Promise<void> => {
  await invite(owner, team.slug, who.email);
  const pending = (await myInvites(who)).find((i) => i.team.slug === team.slug);
  if (!pending) throw new Error('join: the invite is not listed');
  await call({ method: 'POST', path: `/api/invites/${pending.uuid}/accept`, token: who.token }, 200, 'accept');
};

export interface Session {
  token: string;
  refreshToken: string;
  sessionId: string;
}

const claimsOf = (token: string): { session_id: string } =>
  JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8'));

/**
 * `count` more sessions of an account, made as sign-in makes them (lib's newSession) but without
 * hashing a password 45 ms each: pools for sign-out, refresh and session deletion.
 */
export const mintSessions = async (account: Account, count: number): Promise<Session[]> => {
  const user = await storedUser(account.uuid);
  const made = await inParallel(count, 8, () => newSession(user, { ip: '127.0.0.1', userAgent: 'roster-bench' }, new Date()));
  // 50 sessions (100 items) per transaction, the most one may hold.
  for (let i = 0; i < made.length; i += 50) {
    await db()
      .transaction.write((tx) => made.slice(i, i + 50).flatMap((s) => s.writes(tx)))
      .go();
  }
  return made.map(({ body: { session } }) => ({
    token: session.access_token,
    refreshToken: session.refresh_token,
    sessionId: claimsOf(session.access_token).session_id,
  }));
};
