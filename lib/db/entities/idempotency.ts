import { Entity, type EntityConfiguration } from 'electrodb';
import { KEYS, TTL_ATTRIBUTE } from './table.ts';

/** A key's record is IN_PROGRESS while its first request runs, then COMPLETED with the answer to replay. */
export const IDEMPOTENCY_STATES = ['IN_PROGRESS', 'COMPLETED'] as const;

/**
 * One record per (user, `Idempotency-Key`) of an authenticated POST (lib/http/idempotency-store.ts): the
 * first request claims it with a conditional PutItem, and its answer (status and body) is stored
 * on it for 24 hours. The key is kept as its SHA-256 hex: a caller's key is up to 255 characters
 * of anything printable, and the record only needs to tell keys apart. Each user has a partition
 * per key, so no partition grows with use. `ttl` is housekeeping: the claim's condition treats a
 * record past it as absent.
 */
export const idempotencyRecord = (config?: EntityConfiguration) =>
  new Entity(
    {
      model: { entity: 'idempotencyRecord', version: '1', service: 'roster' },
      attributes: {
        userUuid: { type: 'string', required: true, readOnly: true },
        keyHash: { type: 'string', required: true, readOnly: true },
        /** SHA-256 hex of the route, the path and the body: the same key with another request is refused. */
        fingerprint: { type: 'string', required: true },
        state: { type: IDEMPOTENCY_STATES, required: true },
        /** IN_PROGRESS: a random token of the request holding the key, so only it settles or frees the record. */
        lock: { type: 'string' },
        /** IN_PROGRESS: epoch ms after which the holder is taken to have died (its function's timeout passed). */
        lockedUntil: { type: 'number' },
        /** COMPLETED: the first answer's status and JSON body. */
        status: { type: 'number' },
        body: { type: 'string' },
        ttl: { type: 'number', field: TTL_ATTRIBUTE, required: true },
      },
      indexes: {
        primary: { pk: { field: KEYS.pk, composite: ['userUuid', 'keyHash'] }, sk: { field: KEYS.sk, composite: [] } },
      },
    },
    config,
  );
