import type { ClientInfo } from '#lib/auth/session-items.ts';
import type { Db } from '#lib/db/service.ts';
import { limitRecoverIp } from '#lib/limits/source-network.ts';
import type { RecoverInput } from '#lib/wire/schemas.ts';
import { accountMessage } from './verification.ts';

/**
 * Asks for a reset link (docs/accounts.md). The same two requests whether or not an account has
 * the address: the source network's reset bucket, then one PutItem of a `recovery` outbox
 * message. The mailer looks the address up when it sends, skips an unknown one, and charges the
 * address's allowance (lib/limits/recipient-mail.ts) only for what it sends: nothing in the answer,
 * its timing or the items written depends on the account. Throws `rate_limited`, `unavailable`.
 */
export const recover = async (db: Db, input: RecoverInput, client: ClientInfo, now: Date): Promise<Record<string, never>> =>
  mailByAddress(db, 'recovery', input.email, client, now);

/**
 * Asks for a new confirmation link by address, without a session (GoTrue's `POST /resend` with
 * `type: signup`): the same requests as recover, for a `confirmation` message, which the mailer
 * sends only to an account of that address not confirmed yet. Throws `rate_limited`, `unavailable`.
 */
export const resendConfirmation = async (db: Db, email: string, client: ClientInfo, now: Date): Promise<Record<string, never>> =>
  mailByAddress(db, 'confirmation', email, client, now);

const mailByAddress = async (db: Db, kind: 'recovery' | 'confirmation', address: string, client: ClientInfo, now: Date) => {
  await limitRecoverIp(db, client.ip, now);
  await db.entities.outboxMessage.create(accountMessage(kind, { address }, now)).go();
  return {};
};
