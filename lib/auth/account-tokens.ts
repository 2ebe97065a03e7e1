import type { EntityItem } from 'electrodb';
import { config } from '#lib/core/config.ts';
import { AppError } from '#lib/core/errors.ts';
import { epochSeconds, isoMillis } from '#lib/core/time.ts';
import type { TokenPurpose, accountToken } from '#lib/db/entities/users.ts';
import type { UserItem } from '#lib/db/items.ts';
import type { Db, Tx } from '#lib/db/service.ts';
import { hashOpaqueToken, newOpaqueToken } from './opaque-tokens.ts';

/**
 * The tokens of mailed links (docs/accounts.md). The mailer makes one when it sends the e-mail that
 * carries it (issueToken), so its value exists only in that e-mail: the table holds its SHA-256.
 * A token is bound to one purpose and one address (and, but for an invitation's or an unsubscribe
 * link's, one account and that account's `tokenEpoch`), works until its expiry, and is used up by a
 * conditional delete in the transaction of the change it allows (useToken): of two requests with
 * one token, one wins. An unsubscribe link's is never used up: saying "no more" twice is harmless.
 */
export type AccountTokenItem = EntityItem<ReturnType<typeof accountToken>>;

/** Lifetimes in minutes; an invitation's token lives as long as its invitation. */
const LIFETIME_MINUTES: Record<Exclude<TokenPurpose, 'invitation'>, number> = {
  verification: config.verifyTokenMinutes,
  email_change: config.verifyTokenMinutes,
  recovery: config.resetTokenMinutes,
  // A mail may be read, and its link used, long after it was sent; the link can only say "no more".
  unsubscribe: 90 * 24 * 60,
};

/** Unknown, used, expired, another purpose's or another address's: one answer, whatever the reason. */
export const tokenExpired = (): AppError => new AppError('token_expired');

/** A user's `tokenEpoch`, absent counting as 0. */
export const epochOf = (u: Pick<UserItem, 'tokenEpoch'>): number => u.tokenEpoch ?? 0;

export interface TokenFor {
  purpose: TokenPurpose;
  /** The recipient, and the only address the token can confirm. */
  email: string;
  /** The account it acts on, with its `tokenEpoch` now; none for an invitation. */
  user?: Pick<UserItem, 'userUuid' | 'tokenEpoch'>;
  inviteUuid?: string;
  /** For an unsubscribe link: the team whose mail carried it. */
  teamId?: number;
  /** For an invitation: its expiry (ISO 8601). */
  expiresAt?: string;
}

/** Makes a token and stores its hash; answers the value, for the e-mail only. */
export const issueToken = async (db: Db, what: TokenFor, now: Date): Promise<string> => {
  const token = newOpaqueToken();
  const expiresAt =
    what.purpose === 'invitation' ? Date.parse(what.expiresAt ?? '') : now.getTime() + LIFETIME_MINUTES[what.purpose] * 60_000;
  if (!Number.isFinite(expiresAt)) throw new Error('an invitation token needs the invitation expiry');
  await db.entities.accountToken
    .create({
      tokenHash: hashOpaqueToken(token),
      purpose: what.purpose,
      email: what.email,
      ...(what.user ? { userUuid: what.user.userUuid, epoch: epochOf(what.user) } : {}),
      ...(what.inviteUuid ? { inviteUuid: what.inviteUuid } : {}),
      ...(what.teamId !== undefined ? { teamId: what.teamId } : {}),
      createdAt: isoMillis(now),
      expiresAt,
      // Kept a day past its expiry, then TTL removes it: by then it is refused by its time anyway.
      ttl: epochSeconds(new Date(expiresAt)) + 86_400,
    })
    .go();
  return token;
};

/**
 * The live token item of `token` if it serves one of `purposes`; else 410 `token_expired`. A
 * strongly consistent GetItem: what it finds still has to be used up by useToken to count.
 */
export const findToken = async (db: Db, token: string, purposes: readonly TokenPurpose[], now: Date): Promise<AccountTokenItem> => {
  const { data } = await db.entities.accountToken.get({ tokenHash: hashOpaqueToken(token) }).go({ consistent: true });
  if (!data || !purposes.includes(data.purpose) || data.expiresAt <= now.getTime()) throw tokenExpired();
  return data;
};

/** The transaction item that uses the token up: only if it is still there and unexpired. */
export const useToken = (tx: Tx, item: AccountTokenItem, now: Date) =>
  tx.accountToken
    .delete({ tokenHash: item.tokenHash })
    .where((a, op) => `${op.exists(a.tokenHash)} AND ${op.gt(a.expiresAt, now.getTime())}`)
    .commit();
