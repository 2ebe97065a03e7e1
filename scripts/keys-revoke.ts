/**
 * `npm run keys:revoke -- <kid>`: revokes an access-token signing key at once, after a rotation
 * (docs/keys.md, "Revoking a leaked key"). Sets the key's retiredAt in the public keys item to a
 * token lifetime plus 31 s ago (lib/auth/key-revocation.ts), with a write conditional on the item
 * as read. Refuses (exit 1, nothing written) an unknown kid and the key that signs; says so (exit 0)
 * for a key already revoked. Locally: DYNAMODB_ENDPOINT and TABLE_NAME as for the server. Against
 * the deployed table: no DYNAMODB_ENDPOINT, TABLE_NAME of the stack's table, and the operator's AWS
 * credentials and AWS_REGION (dynamodb:GetItem and PutItem on the table).
 */
import type { Revocation } from '#lib/auth/key-revocation.ts';

// The one argument taken as it is, not through an option parser: a kid is base64url and may begin
// with "-" (about one in 64), which a parser would read as an unknown option.
const args = process.argv.slice(2);
const positionals = args[0] === '--' ? args.slice(1) : args;
const [kid] = positionals;
if (positionals.length !== 1 || !kid || kid === '--help' || kid === '-h') {
  console.error('Usage: npm run keys:revoke -- <kid>   (the kid of the key to revoke, as GET /.well-known/jwks.json lists it)');
  process.exit(2);
}
const endpoint = process.env.DYNAMODB_ENDPOINT;
if (!endpoint) {
  // The deployed table: nothing is left to defaults (a wrong table or region would only say "unknown key").
  const missing = ['TABLE_NAME', 'AWS_REGION'].filter((name) => !process.env[name]);
  if (missing.length > 0) {
    console.error(
      `DYNAMODB_ENDPOINT is not set, so this would run against DynamoDB in AWS: set ${missing.join(' and ')} (the stack's ` +
        'table, output TableName, and its region), or set DYNAMODB_ENDPOINT for DynamoDB Local.',
    );
    process.exit(2);
  }
}

// Imported only now: the modules read the environment when they load.
const { CACHE_MAX_AGE_MS, PUBLICATION_LEAD_MS } = await import('#lib/auth/keys/model.ts');
const { revokeKey } = await import('#lib/auth/key-revocation.ts');
const { config } = await import('#lib/core/config.ts');
const { db } = await import('#lib/db/service.ts');

const table = `table ${config.tableName}${endpoint ? ` at ${endpoint}` : ` in ${config.region}`}`;
const rotate = endpoint
  ? `DYNAMODB_ENDPOINT=${endpoint} npm run keys:rotate (same DATA_DIR and TABLE_NAME as the server)`
  : `aws secretsmanager rotate-secret --secret-id ${config.signingKeySecretArn ?? '<SigningKey secret ARN>'}`;
const now = new Date();
const at = (ms: number) => new Date(ms).toISOString();

let result: Revocation;
try {
  result = await revokeKey(db(), kid, now);
} catch (error) {
  const why = error instanceof Error ? error.message : String(error);
  console.error(`Could not revoke ${kid} in ${table} (${why}); run this again: it says whether the key is revoked.`);
  process.exit(1);
}

if (result.outcome === 'unknown') {
  console.error(
    `No key ${kid} in the public keys item of ${table}: nothing to revoke (a rotation removes keys whose tokens have all expired).`,
  );
  process.exit(1);
}
if (result.outcome === 'only-signer') {
  console.error(
    `Key ${kid} is the key that signs (or will, once its rotation finishes): no finished rotation has retired it in favour of ` +
      `a newer key, and revoking it would make every sign-up, sign-in and refresh answer 503; nothing written. Rotate first ` +
      `(${rotate}), wait for the rotation to finish (it records this key's retirement), then run this again.`,
  );
  process.exit(1);
}
if (result.outcome === 'already-revoked') {
  console.log(
    `Key ${kid} is already revoked in ${table} (retiredAt ${result.key.retiredAt ?? ''}): verifiers refuse its tokens; nothing written.`,
  );
  process.exit(0);
}
const { key, signer } = result;
const publishedAt = Date.parse(signer.publishedAt ?? signer.createdAt);
console.log(`Revoked key ${kid} in ${table}: retiredAt is now ${key.retiredAt ?? ''} (a token lifetime and 31 s ago).`);
console.log(`Signs now: ${signer.kid} (${signer.alg}, published ${at(publishedAt)}).`);
console.log(
  `Within 5 minutes (by ${at(now.getTime() + CACHE_MAX_AGE_MS)}) every Roster function has reloaded its keys: verifiers refuse ` +
    `tokens of ${kid}, and sign-up, sign-in and refresh sign with ${signer.kid}. Until then a warm function may still accept, or ` +
    `even issue, a token of ${kid}. The JWKS document drops ${kid} within 10 s (HTTP caches may keep it 60 s more).`,
);
if (now.getTime() - publishedAt < PUBLICATION_LEAD_MS) {
  console.log(
    `${signer.kid} was published less than ${PUBLICATION_LEAD_MS / 1000} s ago: until ${at(publishedAt + PUBLICATION_LEAD_MS)} a ` +
      "verifier elsewhere holding an older copy of the JWKS may refuse its tokens (Roster's own functions find it at once).",
  );
}
console.log(
  `Sessions stay valid: refresh tokens are unaffected; a client whose token of ${kid} is refused refreshes and gets a token of ${signer.kid}.`,
);
