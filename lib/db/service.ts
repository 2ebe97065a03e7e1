import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { Service, type ServiceConfiguration } from 'electrodb';
import { config } from '../config.ts';
import { createDocumentClient } from './client.ts';
import { signingKeys } from './entities/keys.ts';
import { invite, membership, pendingInvite, slugClaim, team } from './entities/teams.ts';
import { rateLimit } from './entities/limits.ts';
import { outboxMessage } from './entities/outbox.ts';
import { emailClaim, idClaim, refreshToken, session, user } from './entities/users.ts';

const FACTORIES = {
  user,
  emailClaim,
  idClaim,
  session,
  refreshToken,
  team,
  slugClaim,
  membership,
  invite,
  pendingInvite,
  rateLimit,
  signingKeys,
  outboxMessage,
};

type Entities = { [K in keyof typeof FACTORIES]: ReturnType<(typeof FACTORIES)[K]> };

interface Joins {
  join: (alias: string, entity: Entities[keyof Entities], config: ServiceConfiguration) => void;
}

/**
 * The data seam: every use case takes this. Each entity is made and joined to the service on first
 * use, bound to this client and table (tests run one table per file): ElectroDB checks every model
 * against its JSON schema as it makes it, which was most of a cold start's own work, and a function
 * uses a few of the thirteen. A transaction's callback reaches its entities through the same
 * `entities`, so it makes what it touches.
 */
export const createDb = (client: DynamoDBDocumentClient, table: string) => {
  // ElectroDB's own typings know neither the named constructor nor join(), both documented.
  const service = new (Service as unknown as new (name: string, config: ServiceConfiguration) => Service<Entities> & Joins)('roster', {
    client,
    table,
  });
  service.entities = new Proxy(service.entities, {
    get: (target, name) => {
      if (typeof name !== 'string' || !(name in FACTORIES)) return undefined;
      const key = name as keyof Entities;
      if (!Object.hasOwn(target, key)) service.join(key, FACTORIES[key](), { client, table });
      return target[key];
    },
  });
  // The client rides along for the few requests ElectroDB does not build (see batch-read.ts).
  return Object.assign(service, { documents: client });
};

export type Db = ReturnType<typeof createDb>;

/** The entities as a write transaction's callback receives them: only these build `.commit()` items. */
export type Tx = Parameters<Parameters<Db['transaction']['write']>[0]>[0];

let shared: Db | undefined;

/** The process-wide service, made on first use so that importing a module costs nothing. */
export const db = (): Db => (shared ??= createDb(createDocumentClient(), config.tableName));
