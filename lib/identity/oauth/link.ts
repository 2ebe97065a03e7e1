import { type Claims, readAsActor, requireAal2 } from '#lib/auth/session-items.ts';
import { AppError } from '#lib/core/errors.ts';
import { noteRequest } from '#lib/core/log.ts';
import type { Db } from '#lib/db/service.ts';
import type { ProviderStart } from '#lib/wire/oauth.ts';
import { SECOND_FACTOR_FIRST, hasVerifiedFactor } from '../account.ts';
import { type FlowNames, startFlow } from './start.ts';

// Apart from identities.ts: only a link's start needs openid-client (start.ts), so listing and
// unlinking do not bundle it.

/**
 * Starts linking a provider to the signed-in account: answers the provider's URL for the browser.
 * A new way in is as strong as a new factor, so an account with one links from aal2 only.
 * Throws `unauthorized`, `mfa_required`, `validation_failed`.
 */
export const startLink = async (db: Db, claims: Claims, start: ProviderStart, now: Date, names?: FlowNames) => {
  const {
    actor,
    items: [u],
  } = await readAsActor(db, claims, (userUuid) => [[db.entities.user, { userUuid }]] as const);
  if (!u) throw new AppError('unauthorized');
  if (hasVerifiedFactor(u)) requireAal2(actor, SECOND_FACTOR_FIRST);
  noteRequest({ userId: u.userUuid });
  return { url: await startFlow(db, start, now, { linkUserUuid: u.userUuid, ...(names ? { names } : {}) }) };
};
