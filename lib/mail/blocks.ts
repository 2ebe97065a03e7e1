import { config } from '#lib/core/config.ts';
import type { Read } from '#lib/db/batch-read.ts';
import type { Db } from '#lib/db/service.ts';
import { normaliseEmail } from '#lib/limits/account-key.ts';
import { withToken } from './account-mail.ts';

/**
 * The recipient's word (docs/mail.md, "Saying no"): every invitation and ownership nomination
 * carries a link (and RFC 8058's List-Unsubscribe headers) with which its recipient stops further
 * invitations and nominations to the address from that team, or from every team
 * (lib/teams/invites/unsubscribe.ts). The block is the address's mailBlock item. An invite to a
 * blocked address is refused as one to a suppressed address is (lib/mail/suppression.ts), and the
 * mailer sends nothing to it from that team (./plans.ts).
 */

/** The page behind the link: `{PUBLIC_URL}/unsubscribe?token=…` (GET shows it, POST is the one click). */
export const unsubscribeUrl = (token: string, publicUrl: string = config.publicUrl): string =>
  withToken(`${publicUrl.replace(/\/+$/u, '')}/unsubscribe`, token);

/** The key of `email`'s block item. */
export const blockKey = (email: string) => ({ email: normaliseEmail(email) });

/** The block item of `email`, for a BatchGetItem the caller makes anyway. */
export const blockOf = (db: Db, email: string) => [db.entities.mailBlock, blockKey(email)] as const satisfies Read;

/** What a block item says of mail from team `teamId`. */
export const blocks = (
  block: { teams?: number[] | undefined; everyone?: boolean | undefined } | null | undefined,
  teamId: number,
): boolean => block != null && (block.everyone === true || (block.teams ?? []).includes(teamId));

/** Whether the owner of `email` asked for no more mail from team `teamId`: one GetItem (eventually consistent). */
export const isBlocked = async (db: Db, email: string, teamId: number): Promise<boolean> =>
  blocks((await db.entities.mailBlock.get(blockKey(email)).go()).data, teamId);
