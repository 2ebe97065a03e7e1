/**
 * `npm run keys:rotate`: rotates the LOCAL access-token signing keys (docs/keys.md). Adds a new
 * Ed25519 key to DATA_DIR/signing-keys.json and to the public keys item on DynamoDB Local (that
 * first, so no token is signed by a key verifiers cannot find), retires the old one, and drops
 * keys whose tokens have all expired. A running server signs with the new key within 5 minutes;
 * tokens of the old key keep working until they expire. Deployed keys rotate in Secrets Manager.
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
const { rotateLocalKeys, signingKeyOf } = await import('../lib/auth/keys.ts');
const { config } = await import('../lib/config.ts');
const { db } = await import('../lib/db/service.ts');

const keyset = await rotateLocalKeys(db(), config.dataDir, new Date());
console.log(`Rotated the signing keys in ${config.dataDir} and table ${config.tableName} at ${endpoint}.`);
for (const key of keyset.keys) {
  const state = key === signingKeyOf(keyset) ? 'signs' : `retired ${key.retiredAt ?? ''}, verifies until its tokens expire`;
  console.log(`  ${key.kid}  ${key.alg}  created ${key.createdAt}  ${state}`);
}
