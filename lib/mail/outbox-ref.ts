/** What identifies an outbox message to a mailer, whichever way it arrives (the stream's image, a gsi3 Query). */
import { OUTBOX_KINDS, type OutboxKind } from '#lib/db/entities/outbox.ts';

/** What a mailer knows of a message before it claims it: the part that never changes, in the stream's image and in gsi3. */
export type OutboxRef = { messageId: string; createdAt: string } & (
  | { kind: 'invitation' | 'declined'; inviteUuid: string }
  | {
      kind:
        | 'verification'
        | 'email_change'
        | 'email_change_notice'
        | 'recovery_code_used'
        | 'factor_added'
        | 'identities_changed'
        | 'identity_refused';
      userUuid: string;
      address: string;
    }
  | { kind: 'recovery' | 'confirmation' | 'address_in_use'; address: string }
  | { kind: 'transfer'; teamId: number; transferId: string }
);

/** A message's stored attributes, as the stream's image or a gsi3 Query has them. */
export interface OutboxFields {
  messageId?: string | undefined;
  kind?: string | undefined;
  createdAt?: string | undefined;
  inviteUuid?: string | undefined;
  userUuid?: string | undefined;
  address?: string | undefined;
  teamId?: number | undefined;
  transferId?: string | undefined;
}

const isKind = (kind: string | undefined): kind is OutboxKind => (OUTBOX_KINDS as readonly (string | undefined)[]).includes(kind);

/** The ref of a stored message; undefined when it lacks what its kind needs (nothing could be sent for it). */
export const outboxRefOf = ({
  messageId,
  kind,
  createdAt,
  inviteUuid,
  userUuid,
  address,
  teamId,
  transferId,
}: OutboxFields): OutboxRef | undefined => {
  if (!messageId || !createdAt || !isKind(kind)) return undefined;
  switch (kind) {
    case 'invitation':
    case 'declined':
      return inviteUuid ? { messageId, createdAt, kind, inviteUuid } : undefined;
    case 'recovery':
    case 'confirmation':
    case 'address_in_use':
      return address ? { messageId, createdAt, kind, address } : undefined;
    case 'transfer':
      return teamId !== undefined && transferId ? { messageId, createdAt, kind, teamId, transferId } : undefined;
    default:
      return userUuid && address ? { messageId, createdAt, kind, userUuid, address } : undefined;
  }
};
