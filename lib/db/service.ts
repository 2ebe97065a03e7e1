import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { type Service, createWriteTransaction } from 'electrodb';
import { config } from '#lib/core/config.ts';
import { createDocumentClient } from './client.ts';
import { auditEntry } from './entities/audit.ts';
import { cursorKey } from './entities/cursor-key.ts';
import { domainOwner, joinRequest, teamDomain } from './entities/domains.ts';
import { factor, mfaChallenge, passkeyChallenge, passkeyCredential, recoveryCodes } from './entities/factors.ts';
import { idempotencyRecord } from './entities/idempotency.ts';
import { identityClaim, oauthCode, oauthFlow } from './entities/identities.ts';
import { invite, inviteSweep, pendingInvite } from './entities/invites.ts';
import { signingKeys } from './entities/keys.ts';
import { rateLimit } from './entities/limits.ts';
import { mailBlock, mailSuppression } from './entities/mail.ts';
import { outboxMessage } from './entities/outbox.ts';
import { membership, slugClaim, team, teamCleanup } from './entities/teams.ts';
import { transfer } from './entities/transfers.ts';
import { accountToken, emailClaim, idClaim, refreshToken, session, user } from './entities/users.ts';
import { webhookCount, webhookDelivery, webhookEndpoint, webhookFanout, webhookSweep } from './entities/webhooks.ts';

/** Every entity of the table (test/unit/entities.test.ts checks each model). */
export const FACTORIES = {
  user,
  emailClaim,
  idClaim,
  session,
  refreshToken,
  accountToken,
  factor,
  mfaChallenge,
  recoveryCodes,
  passkeyCredential,
  passkeyChallenge,
  identityClaim,
  oauthFlow,
  oauthCode,
  team,
  slugClaim,
  membership,
  teamCleanup,
  teamDomain,
  domainOwner,
  joinRequest,
  transfer,
  invite,
  pendingInvite,
  inviteSweep,
  rateLimit,
  signingKeys,
  cursorKey,
  outboxMessage,
  mailSuppression,
  mailBlock,
  idempotencyRecord,
  auditEntry,
  webhookEndpoint,
  webhookCount,
  webhookDelivery,
  webhookFanout,
  webhookSweep,
};

type Entities = { [K in keyof typeof FACTORIES]: ReturnType<(typeof FACTORIES)[K]> };

/**
 * The data seam: every use case takes this. Each entity is made on first use, bound to this
 * client and table (tests run one table per file): ElectroDB builds a good deal for each model,
 * and a function uses a few of them. No ElectroDB Service: it would make or check every
 * entity up front, and its transactions are ElectroDB's createWriteTransaction over the entities,
 * which this calls with the same ones. A transaction's callback reaches them through the same
 * lazy `entities`, so it makes what it touches, and the transaction sees those.
 */
export const createDb = (client: DynamoDBDocumentClient, table: string) => {
  const made: Partial<Entities> = {};
  const entities = new Proxy(made as Entities, {
    get: (target, name) => {
      if (typeof name !== 'string' || !(name in FACTORIES)) return undefined;
      const key = name as keyof Entities;
      return (target[key] ??= FACTORIES[key]({ client, table }) as never);
    },
  });
  // Typed as a Service's, which is this very call over its own entities.
  const write = ((fn: never) => createWriteTransaction(entities, fn)) as unknown as Service<Entities>['transaction']['write'];
  // The client rides along for the few requests ElectroDB does not build (see batch-read.ts).
  return { entities, transaction: { write }, documents: client };
};

export type Db = ReturnType<typeof createDb>;

/** The entities as a write transaction's callback receives them: only these build `.commit()` items. */
export type Tx = Parameters<Parameters<Db['transaction']['write']>[0]>[0];

let shared: Db | undefined;

/** The process-wide service, made on first use so that importing a module costs nothing. */
export const db = (): Db => (shared ??= createDb(createDocumentClient(), config.tableName));
