import { KEYS } from './entities/table.ts';

/** An ElectroDB entity, as far as reading one item's key goes. */
interface Keyed {
  get: (composite: never) => { params: (options: { table: string }) => unknown };
}

/**
 * The partition key `entity` gives `composite`, with each id in it (16 zero-padded digits) as `*`:
 * the IAM `StringLike` pattern of every such partition (`dynamodb:LeadingKeys`), so a function can
 * be granted one kind of partition (a team's webhook endpoints, say) and not the whole table.
 * Made from the entity itself, so the pattern follows its key format.
 */
export const partitionPattern = (entity: Keyed, composite: object): string => {
  const { Key } = entity.get(composite as never).params({ table: 'unused' }) as { Key: Record<string, unknown> };
  const pk = Key[KEYS.pk];
  if (typeof pk !== 'string') throw new Error('the entity has no string partition key');
  return pk.replace(/\d{16}/g, '*');
};
