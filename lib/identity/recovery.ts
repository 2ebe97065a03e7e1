import type { ClientInfo } from '#lib/auth/session-items.ts';
import type { Db } from '#lib/db/service.ts';
import { limitAddressMail } from '#lib/limits/mail-allowances.ts';
import { limitRecoverIp } from '#lib/limits/source-network.ts';
import type { RecoverInput } from '#lib/wire/schemas.ts';
import { accountMessage } from './verification.ts';

/**
 * Asks for a reset link (docs/accounts.md). The same three requests whether or not an account has
 * the address: the source network's reset bucket, the address's mail bucket (charged either way,
 * so a 429 tells nothing), then one PutItem of a `recovery` outbox message. The mailer looks the
 * address up when it sends and skips an unknown one. Throws `rate_limited`, `unavailable`.
 */
export const recover = async (db: Db, input: RecoverInput, client: ClientInfo, now: Date): Promise<Record<string, never>> => {
  await limitRecoverIp(db, client.ip, now);
  await limitAddressMail(db, input.email, now);
  await db.entities.outboxMessage.create(accountMessage('recovery', { address: input.email }, now)).go();
  return {};
};
