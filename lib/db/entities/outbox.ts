import { Entity, type EntityConfiguration } from 'electrodb';
import { KEYS, TTL_ATTRIBUTE } from '../table.ts';

/**
 * A message to send, written in the same transaction as the change that calls for it (the
 * transactional outbox): an invite created or re-sent, an invite declined. The table's stream
 * hands each new one to the mailer, which reads the invite as it is then, sends, and records the
 * outcome here; `status` is what makes a record processed twice send once.
 */
export const outboxMessage = (config?: EntityConfiguration) =>
  new Entity({
    model: { entity: 'outboxMessage', version: '1', service: 'roster' },
    attributes: {
      messageId: { type: 'string', required: true, readOnly: true },
      kind: { type: ['invitation', 'declined'] as const, required: true, readOnly: true },
      inviteUuid: { type: 'string', required: true, readOnly: true },
      status: { type: ['PENDING', 'SENDING', 'SENT', 'FAILED'] as const, required: true },
      /** Epoch milliseconds until which a mailer that claimed it may be sending it. */
      leaseUntil: { type: 'number' },
      attempts: { type: 'number' },
      error: { type: 'string' },
      createdAt: { type: 'string', required: true, readOnly: true },
      sentAt: { type: 'string' },
      ttl: { type: 'number', field: TTL_ATTRIBUTE },
    },
    indexes: {
      primary: { pk: { field: KEYS.pk, composite: ['messageId'] }, sk: { field: KEYS.sk, composite: [] } },
    },
  }, config);
