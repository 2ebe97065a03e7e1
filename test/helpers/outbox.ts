import { randomUUID } from 'node:crypto';
import { db } from '#lib/db/service.ts';
import type { OutboxRef } from '#lib/mail/outbox-ref.ts';

let ids = 0;

/**
 * A team, its inviter and an invite written through the entities (created at `at`, expiring a week
 * later unless said otherwise); returns what assertions need.
 */
export const seedInvite = async (
  invite: { status?: 'PENDING' | 'ACCEPTED' | 'DECLINED' | 'REVOKED'; email?: string; expiresAt?: string } = {},
  at: Date = new Date(),
) => {
  const d = db();
  const n = ++ids;
  const stamp = at.toISOString();
  const teamId = 1000 + n;
  const inviterUuid = randomUUID();
  const inviteUuid = randomUUID();
  const inviterEmail = `ann-${n}@example.com`;
  const email = invite.email ?? `bob-${n}@example.com`;
  await d.entities.user
    .create({
      userUuid: inviterUuid,
      userId: 5000 + n,
      email: inviterEmail,
      firstName: 'Ann',
      lastName: 'Lee',
      passwordHash: 'x',
      createdAt: stamp,
      updatedAt: stamp,
    })
    .go();
  await d.entities.team.create({ teamId, name: `Acme ${n}`, slug: `acme-${n}`, ownerCount: 1, createdAt: stamp, updatedAt: stamp }).go();
  await d.entities.invite
    .create({
      inviteUuid,
      inviteId: 7000 + n,
      teamId,
      email,
      role: 'ADMIN',
      status: invite.status ?? 'PENDING',
      invitedByUuid: inviterUuid,
      expiresAt: invite.expiresAt ?? new Date(at.getTime() + 7 * 86_400_000).toISOString(),
      createdAt: stamp,
      updatedAt: stamp,
    })
    .go();
  return { teamName: `Acme ${n}`, inviterEmail, email, inviteUuid };
};

/** An outbox message as the API writes it, or with `over` (status, lease, due time …); returns what a mailer knows of it. */
export const seedMessage = async (
  inviteUuid: string,
  kind: 'invitation' | 'declined' = 'invitation',
  over: Record<string, unknown> = {},
): Promise<OutboxRef> => writeMessage({ kind, inviteUuid }, over);

/** What an account message is about: the account and address (verification, e-mail change, notice) or the address (recovery). */
export type AccountMessage = WithoutIds<Exclude<OutboxRef, { inviteUuid: string }>>;
type WithoutIds<R> = R extends OutboxRef ? Omit<R, 'messageId' | 'createdAt'> : never;

/** An account e-mail's outbox message as the API writes it, or with `over`. */
export const seedAccountMessage = (what: AccountMessage, over: Record<string, unknown> = {}): Promise<OutboxRef> =>
  writeMessage(what, over);

const writeMessage = async (
  what: AccountMessage | { kind: 'invitation' | 'declined'; inviteUuid: string },
  over: Record<string, unknown>,
): Promise<OutboxRef> => {
  const ref: OutboxRef = {
    messageId: randomUUID(),
    createdAt: (over.createdAt as string | undefined) ?? new Date().toISOString(),
    ...what,
  };
  await db()
    .entities.outboxMessage.create({ status: 'PENDING', ...ref, ...over })
    .go();
  return ref;
};

/** An account (and the claim of its address) written through the entities, unconfirmed unless said. */
export const seedUser = async (
  over: { email?: string; emailConfirmedAt?: string; newEmail?: string; firstName?: string; lastName?: string; tokenEpoch?: number } = {},
) => {
  const n = ++ids;
  const stamp = new Date().toISOString();
  const userUuid = randomUUID();
  const email = over.email ?? `carl-${n}-${randomUUID().slice(0, 8)}@example.com`;
  await db()
    .entities.user.create({
      userUuid,
      userId: 9000 + n,
      firstName: 'Carl',
      lastName: 'Ito',
      passwordHash: 'x',
      createdAt: stamp,
      updatedAt: stamp,
      ...over,
      email,
    })
    .go();
  await db().entities.emailClaim.create({ email, userUuid }).go();
  return { userUuid, email, name: `${over.firstName ?? 'Carl'} ${over.lastName ?? 'Ito'}` };
};

export const storedMessage = async ({ messageId }: Pick<OutboxRef, 'messageId'>) =>
  (await db().entities.outboxMessage.get({ messageId }).go({ consistent: true })).data;
