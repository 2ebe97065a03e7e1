import { Entity, type EntityConfiguration } from 'electrodb';
import { KEYS } from './table.ts';

/**
 * The deployment's key for list cursors (lib/db/cursors.ts): 256 random bits, base64url, in one
 * item with a fixed key. Made by the first function that needs it with a conditional put, so two
 * racing creators end up with the one that was written first; never changed after. Whoever can
 * read the table can read it: the table is the trust boundary already (it holds password hashes).
 */
export const cursorKey = (config?: EntityConfiguration) =>
  new Entity(
    {
      model: { entity: 'cursorKey', version: '1', service: 'roster' },
      attributes: {
        /** The one key there is. */
        purpose: { type: ['list-cursor'] as const, required: true, readOnly: true },
        key: { type: 'string', required: true, readOnly: true },
      },
      indexes: {
        primary: { pk: { field: KEYS.pk, composite: ['purpose'] }, sk: { field: KEYS.sk, composite: [] } },
      },
    },
    config,
  );

export const CURSOR_KEY_ITEM = { purpose: 'list-cursor' } as const;

/**
 * The partition key value of that item, as ElectroDB writes it: the functions that page may put
 * only this partition (infra/stack.ts, `dynamodb:LeadingKeys`). Taken from the entity, so a change
 * to the model changes the policy with it.
 */
export const cursorKeyPartitionKey = (): string => {
  const { Key } = cursorKey().get(CURSOR_KEY_ITEM).params<{ Key: Record<string, unknown> }>({ table: 'unused' });
  const pk = Key[KEYS.pk];
  if (typeof pk !== 'string') throw new Error('the cursorKey entity has no string partition key');
  return pk;
};
