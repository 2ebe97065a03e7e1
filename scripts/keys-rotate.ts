/**
 * `npm run keys:rotate`: rotates the LOCAL access-token signing keys in one step (docs/keys.md).
 * Adds a new Ed25519 key to DATA_DIR/signing-keys.json and to the public keys item on DynamoDB
 * Local (that first, so no token is signed by a key verifiers cannot find), retires the old one at
 * now + 10 minutes, and drops keys whose tokens have all expired. A running server signs with the
 * new key once it has been published for 70 s and its 5-minute key cache has expired; tokens of the
 * old key keep working until they expire. Deployed keys rotate in Secrets Manager.
 */
import { resolve } from 'node:path';

const endpoint = process.env.DYNAMODB_ENDPOINT;
if (process.env.SIGNING_KEY_SECRET_ARN) {
  console.error('SIGNING_KEY_SECRET_ARN is set: deployed keys rotate in Secrets Manager (docs/keys.md, "Deployed").');
  process.exit(1);
}
if (!endpoint) {
  console.error(
    'DYNAMODB_ENDPOINT is not set. Start the local server (`npm start`) and run this with DYNAMODB_ENDPOINT set to the\n' +
      'DynamoDB Local URL it prints ("table roster at http://127.0.0.1:<port>"), e.g.\n' +
      '  DYNAMODB_ENDPOINT=http://127.0.0.1:8000 npm run keys:rotate\n' +
      'Use the same DATA_DIR and TABLE_NAME as the server (defaults .data and roster).',
  );
  process.exit(1);
}
process.env.DATA_DIR = resolve(process.env.DATA_DIR ?? '.data');

// Imported only now: the modules read the environment when they load.
const { PUBLICATION_LEAD_MS, newestKeyOf, signingKeyOf } = await import('#lib/auth/keys/model.ts');
const { readPublishedKeys } = await import('#lib/auth/keys/table-store.ts');
const { rotateLocalKeys } = await import('#lib/auth/keys/local.ts');
const { config } = await import('#lib/core/config.ts');
const { db } = await import('#lib/db/service.ts');

const now = new Date();
const keyset = await rotateLocalKeys(db(), config.dataDir, now);
const published = (await readPublishedKeys(db(), true)) ?? [];
const signing = signingKeyOf(keyset, published, now);
const added = newestKeyOf(keyset.keys);
const from = new Date(now.getTime() + PUBLICATION_LEAD_MS).toISOString();
console.log(`Rotated the signing keys in ${config.dataDir} and table ${config.tableName} at ${endpoint}.`);
for (const key of keyset.keys) {
  const state =
    key === added && key !== signing
      ? `new: signs from ${from} (once published ${PUBLICATION_LEAD_MS / 1000} s), in a running server within 5 minutes after that`
      : key === signing
        ? `signs until the new key takes over${key.retiredAt ? `, at the latest ${key.retiredAt}` : ''}`
        : `retired ${key.retiredAt ?? ''}, verifies until its tokens expire`;
  console.log(`  ${key.kid}  ${key.alg}  created ${key.createdAt}  ${state}`);
}
