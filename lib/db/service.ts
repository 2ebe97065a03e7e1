import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { Service } from 'electrodb';
import { config } from '../config.ts';
import { createDocumentClient } from './client.ts';
import { signingKeys } from './entities/keys.ts';
import { invite, membership, pendingInvite, slugClaim, team } from './entities/teams.ts';
import { rateLimit } from './entities/limits.ts';
import { outboxMessage } from './entities/outbox.ts';
import { emailClaim, idClaim, refreshToken, session, user } from './entities/users.ts';

/**
 * The data seam: every use case takes this. Entities are made afresh for each service, since a
 * Service binds its entities to one client and table (tests run one table per file).
 */
export const createDb = (client: DynamoDBDocumentClient, table: string) => {
  const service = new Service(
    {
      user: user(),
      emailClaim: emailClaim(),
      idClaim: idClaim(),
      session: session(),
      refreshToken: refreshToken(),
      team: team(),
      slugClaim: slugClaim(),
      membership: membership(),
      invite: invite(),
      pendingInvite: pendingInvite(),
      rateLimit: rateLimit(),
      signingKeys: signingKeys(),
      outboxMessage: outboxMessage(),
    },
    { client, table },
  );
  // The client rides along for the few requests ElectroDB does not build (see batch-read.ts).
  return Object.assign(service, { documents: client });
};

export type Db = ReturnType<typeof createDb>;

/** The entities as a write transaction's callback receives them: only these build `.commit()` items. */
export type Tx = Parameters<Parameters<Db['transaction']['write']>[0]>[0];

let shared: Db | undefined;

/** The process-wide service, made on first use so that importing a module costs nothing. */
export const db = (): Db => (shared ??= createDb(createDocumentClient(), config.tableName));
