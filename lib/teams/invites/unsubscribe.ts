import { findToken } from '#lib/auth/account-tokens.ts';
import { AppError } from '#lib/core/errors.ts';
import { isoMillis } from '#lib/core/time.ts';
import type { Db } from '#lib/db/service.ts';
import { commit, named, write } from '#lib/db/transactions.ts';
import { NO_ACCOUNT, audited } from '#lib/events/audit.ts';
import type { StaticAnswer } from '#lib/http/static.ts';
import { blockKey } from '#lib/mail/blocks.ts';
import { UNUSABLE, unsubscribePage, unsubscribedPage } from '#lib/pages/unsubscribe-page.ts';

/**
 * The one-click link of invitations and nominations (lib/mail/blocks.ts, docs/mail.md "Saying
 * no"): what it stands for, and the block it sets, with the team's `mail.blocked` audit entry.
 */

export type BlockScope = 'team' | 'everyone';

/** What a link's token stands for: the address and the team whose mail carried it; undefined when it cannot be used (its team is gone too). */
export const unsubscribeLink = async (db: Db, token: string, now: Date) => {
  const item = await findToken(db, token, ['unsubscribe'], now).catch((error: unknown) => {
    if (error instanceof AppError && error.code === 'token_expired') return undefined;
    throw error;
  });
  if (item?.teamId === undefined) return undefined;
  // A team gone sends nothing more, and has no audit log to tell.
  const team = (await db.entities.team.get({ teamId: item.teamId }).go()).data;
  return team ? { email: item.email, teamId: item.teamId, teamName: team.name } : undefined;
};

/**
 * Blocks invitations and nominations to the link's address from its team (`team`) or from every
 * team (`everyone`), with the team's audit entry, in one transaction; a block already in place
 * changes nothing and writes no entry. Answers what the link stands for, or undefined when the
 * link cannot be used (unknown or expired).
 */
export const blockFromLink = async (db: Db, token: string, scope: BlockScope, now: Date) => {
  const link = await unsubscribeLink(db, token, now);
  if (!link) return undefined;
  const { email, teamId } = link;
  const key = blockKey(email);
  await commit(
    () =>
      write(db, (tx) => [
        named(
          'block',
          scope === 'everyone'
            ? tx.mailBlock
                .update(key)
                .set({ everyone: true, updatedAt: isoMillis(now) })
                .where((a, op) => `${op.notExists(a.everyone)} OR ${op.ne(a.everyone, true)}`)
                .commit()
            : tx.mailBlock
                .update(key)
                .add({ teams: [teamId] })
                .set({ updatedAt: isoMillis(now) })
                // Nothing to add under a block of every team, nor for a team blocked already.
                .where(
                  (a, op) =>
                    `(${op.notExists(a.everyone)} OR ${op.ne(a.everyone, true)}) AND (${op.notExists(a.teams)} OR ${op.notContains(a.teams, teamId)})`,
                )
                .commit(),
        ),
        named(
          'audit',
          audited(
            tx,
            {
              teamId,
              action: 'mail.blocked',
              actor: { userId: NO_ACCOUNT, email },
              target: { type: 'team', id: teamId, email },
              changes: { blocked: { after: scope } },
            },
            now,
          ),
        ),
      ]),
    // Blocked already: nothing to change, nothing to record.
    // The entry's key is new each time: only the block's condition can fail.
    { block: () => 'done', audit: () => 'retry' },
  );
  return { ...link, scope };
};

/** GET /unsubscribe?token=…: the page of the link, or the one page of a link that cannot be used. Writes nothing. */
export const unsubscribeGet = async (db: Db, token: string | undefined, now: Date): Promise<StaticAnswer> => {
  const link = token ? await unsubscribeLink(db, token, now) : undefined;
  return link ? unsubscribePage(link) : UNUSABLE;
};

/**
 * POST /unsubscribe?token=…: a press on the page (`scope=team` or `scope=everyone`), or a mail
 * client's RFC 8058 one-click POST (`List-Unsubscribe=One-Click`: the team whose mail it was).
 * Anything else changes nothing and shows the page again.
 */
export const unsubscribePost = async (db: Db, token: string | undefined, form: Map<string, string>, now: Date): Promise<StaticAnswer> => {
  const asked = form.get('scope');
  const scope: BlockScope | undefined =
    asked === 'team' || asked === 'everyone' ? asked : form.get('List-Unsubscribe') === 'One-Click' ? 'team' : undefined;
  if (!token) return UNUSABLE;
  if (!scope) return unsubscribeGet(db, token, now);
  const done = await blockFromLink(db, token, scope, now);
  return done ? unsubscribedPage(done, scope) : UNUSABLE;
};
