import { Entity, type EntityConfiguration } from 'electrodb';
import { KEYS } from './table.ts';

/**
 * The public halves of the access-token signing keys, in one item with a fixed key: what every
 * verifier and the JWKS route read (GetItem, cached per process). Written only by whoever holds
 * the private keys (the rotation function deployed, the local keyset locally), always before the
 * key it adds signs anything. Never holds private members: docs/keys.md.
 */
export const signingKeys = (config?: EntityConfiguration) =>
  new Entity(
    {
      model: { entity: 'signingKeys', version: '1', service: 'roster' },
      attributes: {
        /** The one keyset there is: access tokens. */
        purpose: { type: ['access-token'] as const, required: true, readOnly: true },
        keys: {
          type: 'list',
          required: true,
          items: {
            type: 'map',
            properties: {
              kid: { type: 'string', required: true },
              alg: { type: ['RS256', 'EdDSA', 'ES256'] as const, required: true },
              kty: { type: ['RSA', 'OKP', 'EC'] as const, required: true },
              /** OKP and EC keys: the curve and its point (y: EC only). */
              crv: { type: ['Ed25519', 'P-256'] as const },
              x: { type: 'string' },
              y: { type: 'string' },
              /** RSA keys: modulus and exponent. */
              n: { type: 'string' },
              e: { type: 'string' },
              createdAt: { type: 'string', required: true },
              /** When the key was first written to this item: it signs only PUBLICATION_LEAD_MS after (lib/auth/keys/model.ts). */
              publishedAt: { type: 'string' },
              /** When the key stopped (or will stop) signing; verifiers accept it for a token lifetime after. */
              retiredAt: { type: 'string' },
            },
          },
        },
        updatedAt: { type: 'string', required: true },
      },
      indexes: {
        primary: { pk: { field: KEYS.pk, composite: ['purpose'] }, sk: { field: KEYS.sk, composite: [] } },
      },
    },
    config,
  );

/** The one signingKeys item there is: the access-token keys. */
export const SIGNING_KEYS_ITEM = { purpose: 'access-token' } as const;

/**
 * The partition key value of that item, as ElectroDB writes it (`$roster#purpose_access-token`):
 * the rotation function may touch only this partition (infra/background.ts `rotateKeys`, `dynamodb:LeadingKeys`).
 * Taken from the entity itself, so a change to the model changes the policy with it.
 */
export const signingKeysPartitionKey = (): string => {
  const { Key } = signingKeys().get(SIGNING_KEYS_ITEM).params<{ Key: Record<string, unknown> }>({ table: 'unused' });
  const pk = Key[KEYS.pk];
  if (typeof pk !== 'string') throw new Error('the signingKeys entity has no string partition key');
  return pk;
};
