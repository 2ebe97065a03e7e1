import { randomUUID } from 'node:crypto';
import type { ProviderProfile } from '#lib/auth/oauth-profiles.ts';
import { AppError } from '#lib/core/errors.ts';
import { newId } from '#lib/core/ids.ts';
import { isoMillis } from '#lib/core/time.ts';
import type { UserItem } from '#lib/db/items.ts';
import type { Db, Tx } from '#lib/db/service.ts';
import { type TxItem, commit, named, write } from '#lib/db/transactions.ts';
import { hasPassword } from '#lib/wire/views.ts';
import { hasVerifiedFactor } from '../account.ts';
import { accountMessage } from '../verification.ts';

/**
 * Which account a provider's profile signs in (docs/sso.md, "Linking"): the account its identity
 * is linked to; else, for an address no account holds, a new account; else the account holding
 * the address, linked on the way, only when nobody but the address's owner can be holding it: the
 * provider says the address is verified, Roster's account has it confirmed, its password (if any)
 * was last set through the mailbox (a reset link, an invitation), and it has no second factor
 * (its owner links from aal2). Anything else is refused and the account's owner told: an account
 * someone signed up with another's address and a password they know stays theirs to sign in to
 * even once its owner confirms the address, and must not gain the owner's provider identity.
 */

/** Identities one account may link: a provider each, with room for a second account at one. */
export const MAX_IDENTITIES = 10;

/** Why a provider's sign-in or link was refused: GoTrue's `error_code`s where it has one (docs/sso.md). */
export type Refusal = 'provider_email_needs_verification' | 'email_exists' | 'too_many_identities' | 'bad_oauth_callback';

export type Resolved = { userUuid: string } | { refused: Refusal };

/** Issues the app's code for an account: in the transaction that makes or links the account, or alone. */
export interface CodeWrites {
  inTx: (tx: Tx, userUuid: string) => TxItem;
  alone: (userUuid: string) => Promise<unknown>;
}

const identityOf = (provider: string, profile: ProviderProfile, now: Date) => ({
  id: randomUUID(),
  provider,
  subject: profile.subject,
  email: profile.email,
  createdAt: isoMillis(now),
  lastSignInAt: isoMillis(now),
});

/**
 * Links `profile` at `provider` to account `u` and issues the code, in one transaction: the claim
 * (one identity, one account), the list (as read; the address still the one the caller checked,
 * and still confirmed when `confirmed` asks so), and a notice to the account's address.
 */
const link = async (db: Db, u: UserItem, provider: string, profile: ProviderProfile, now: Date, byAddress: boolean, code?: CodeWrites) => {
  if ((u.identities ?? []).length >= MAX_IDENTITIES) return 'too_many_identities' as const;
  const identity = identityOf(provider, profile, now);
  let answer: 'linked' | 'claimed' | 'changed' = 'linked';
  await commit(
    () =>
      write(db, (tx) => [
        named(
          'identity',
          tx.identityClaim
            .create({ provider, subject: profile.subject, userUuid: u.userUuid, identityId: identity.id, createdAt: identity.createdAt })
            .commit(),
        ),
        named(
          'account',
          tx.user
            .patch({ userUuid: u.userUuid })
            .append({ identities: [identity] })
            .set({ identitiesVersion: (u.identitiesVersion ?? 0) + 1 })
            // The list as read (two links racing cannot both append), the address the caller checked.
            .where((a, op) => {
              const version =
                u.identitiesVersion === undefined ? op.notExists(a.identitiesVersion) : op.eq(a.identitiesVersion, u.identitiesVersion);
              const same = `${version} AND ${op.eq(a.email, u.email)}`;
              // By address: still confirmed, the password the one read (its origin checked), no factor added since.
              return byAddress
                ? `${same} AND ${op.exists(a.emailConfirmedAt)} AND ${op.eq(a.passwordHash, u.passwordHash)} AND ${
                    u.factorsVersion === undefined ? op.notExists(a.factorsVersion) : op.eq(a.factorsVersion, u.factorsVersion)
                  }`
                : same;
            })
            .commit(),
        ),
        named(
          'mail',
          tx.outboxMessage.create(accountMessage('identities_changed', { userUuid: u.userUuid, address: u.email }, now)).commit(),
        ),
        named('code', ...(code ? [code.inTx(tx, u.userUuid)] : [])),
      ]),
    {
      identity: () => {
        answer = 'claimed';
        return 'done';
      },
      account: () => {
        answer = 'changed';
        return 'done';
      },
      otherwise: () => 'retry',
    },
  );
  return answer;
};

/** A new account for the provider's verified address: no password, the address confirmed, the identity linked. */
const create = async (
  db: Db,
  provider: string,
  profile: ProviderProfile,
  code: CodeWrites,
  now: Date,
): Promise<{ userUuid: string } | 'taken'> => {
  const userUuid = randomUUID();
  const identity = identityOf(provider, profile, now);
  let taken = false;
  await commit(
    () => {
      const u: UserItem = {
        userUuid,
        userId: newId(now),
        email: profile.email,
        firstName: profile.firstName,
        lastName: profile.lastName,
        passwordHash: '',
        signUpProvider: provider,
        emailConfirmedAt: isoMillis(now),
        identities: [identity],
        identitiesVersion: 1,
        createdAt: isoMillis(now),
        updatedAt: isoMillis(now),
      };
      return write(db, (tx) => [
        named('email', tx.emailClaim.create({ email: u.email, userUuid }).commit()),
        named(
          'identity',
          tx.identityClaim
            .create({ provider, subject: profile.subject, userUuid, identityId: identity.id, createdAt: identity.createdAt })
            .commit(),
        ),
        named('userId', tx.idClaim.create({ kind: 'user', id: u.userId }).commit()),
        named('user', tx.user.create(u).commit()),
        named('code', code.inTx(tx, userUuid)),
      ]);
    },
    {
      // The address or the identity was claimed meanwhile: the caller reads again.
      email: () => {
        taken = true;
        return 'done';
      },
      identity: () => {
        taken = true;
        return 'done';
      },
      otherwise: () => 'retry',
    },
  );
  return taken ? 'taken' : { userUuid };
};

/**
 * Whether a provider's verified address may link to the account holding it: only the address's
 * owner can be holding the account (see the top of this file).
 */
const linksByAddress = (u: UserItem): boolean =>
  u.emailConfirmedAt !== undefined && (!hasPassword(u) || u.passwordFromMailbox === true) && !hasVerifiedFactor(u);

const claimOf = async (db: Db, provider: string, subject: string) =>
  (await db.entities.identityClaim.get({ provider, subject }).go({ consistent: true })).data;

/**
 * The account `profile` signs in, creating or linking it as the rules above say, with the app's
 * code issued in the same transaction (or alone, for an identity already linked). A race (the same
 * person twice at once, an address signed up meanwhile) is resolved by reading again.
 */
export const signInWith = async (db: Db, provider: string, profile: ProviderProfile, code: CodeWrites, now: Date): Promise<Resolved> => {
  if (!profile.emailVerified) return { refused: 'provider_email_needs_verification' };
  for (let attempt = 0; attempt < 3; attempt++) {
    const claim = await claimOf(db, provider, profile.subject);
    if (claim) {
      await code.alone(claim.userUuid);
      return { userUuid: claim.userUuid };
    }
    const holder = (await db.entities.emailClaim.get({ email: profile.email }).go({ consistent: true })).data;
    if (!holder) {
      const made = await create(db, provider, profile, code, now);
      if (made !== 'taken') return made;
      continue;
    }
    const u = (await db.entities.user.get({ userUuid: holder.userUuid }).go({ consistent: true })).data;
    if (!u || u.email !== profile.email) continue;
    if (!linksByAddress(u)) {
      await db.entities.outboxMessage.create(accountMessage('identity_refused', { userUuid: u.userUuid, address: u.email }, now)).go();
      return { refused: 'email_exists' };
    }
    const linked = await link(db, u, provider, profile, now, true, code);
    if (linked === 'linked') return { userUuid: u.userUuid };
    if (linked === 'too_many_identities') return { refused: linked };
  }
  throw new AppError('conflict');
};

/**
 * Links `profile` to the signed-in account `userUuid`, when the app that started the link trades
 * its code (lib/identity/oauth/exchange.ts): never at the callback, so a link URL sent to someone
 * else ends at nothing. Any verified address: the owner vouches for the identity by signing in to
 * both. Throws `identity_already_exists` (another account holds it), `validation_failed` (too many),
 * `token_expired` (the account is gone), `conflict`.
 */
export const linkTo = async (db: Db, userUuid: string, provider: string, profile: ProviderProfile, now: Date): Promise<void> => {
  for (let attempt = 0; attempt < 3; attempt++) {
    const [claim, u] = await Promise.all([
      claimOf(db, provider, profile.subject),
      db.entities.user
        .get({ userUuid })
        .go({ consistent: true })
        .then(({ data }) => data),
    ]);
    if (!u) throw new AppError('token_expired', 'This code names an account that no longer exists: start again.');
    if (claim && claim.userUuid !== userUuid) throw new AppError('identity_already_exists');
    if (claim) return;
    const linked = await link(db, u, provider, profile, now, false);
    if (linked === 'linked') return;
    if (linked === 'too_many_identities')
      throw new AppError('validation_failed', `An account may link at most ${MAX_IDENTITIES} identities: unlink one first.`);
  }
  throw new AppError('conflict');
};
