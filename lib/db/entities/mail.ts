import { Entity, type EntityConfiguration } from 'electrodb';
import { KEYS } from './table.ts';

/**
 * An address Roster no longer mails: a message to it bounced for good or was marked as spam
 * (lib/mail/suppression.ts). Keyed by the lowercased address, so an invite's read finds it by key
 * in a BatchGetItem it makes anyway. No TTL: it stays until an operator deletes it
 * (docs/operations.md). `at` and `reason` are the latest event's, `since` the first's.
 */
export const mailSuppression = (config?: EntityConfiguration) =>
  new Entity(
    {
      model: { entity: 'mailSuppression', version: '1', service: 'roster' },
      attributes: {
        email: { type: 'string', required: true, readOnly: true },
        reason: { type: ['bounce', 'complaint'] as const, required: true },
        /** What SES reported: bounce type and subtype with the diagnostic code, or the complaint's feedback type. */
        detail: { type: 'string', required: true },
        /** When the event happened, as SES reports it. */
        at: { type: 'string', required: true },
        since: { type: 'string', required: true },
      },
      indexes: {
        primary: { pk: { field: KEYS.pk, composite: ['email'] }, sk: { field: KEYS.sk, composite: [] } },
      },
    },
    config,
  );

/**
 * What the owner of an address asked not to be sent any more (lib/mail/blocks.ts): invitations and
 * ownership nominations from the teams in `teams`, or from every team (`everyone`). Set from the
 * one-click link of those e-mails. One item per address, keyed like the suppression item, so an
 * invite reads both in the BatchGetItem it makes anyway. No TTL: it stays until its owner's word
 * is withdrawn by an operator (docs/mail.md).
 */
export const mailBlock = (config?: EntityConfiguration) =>
  new Entity(
    {
      model: { entity: 'mailBlock', version: '1', service: 'roster' },
      attributes: {
        email: { type: 'string', required: true, readOnly: true },
        /** The teams (ids) whose invitations and nominations the address no longer gets. */
        teams: { type: 'set', items: 'number' },
        /** No invitation or nomination from any team. */
        everyone: { type: 'boolean' },
        updatedAt: { type: 'string', required: true },
      },
      indexes: {
        primary: { pk: { field: KEYS.pk, composite: ['email'] }, sk: { field: KEYS.sk, composite: [] } },
      },
    },
    config,
  );
