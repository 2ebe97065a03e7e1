/**
 * What signing an access token costs per algorithm, the work sign-in, refresh and every link
 * sign-in add to their request: the same claims signed `ROUNDS` times with jose, as
 * lib/auth/signing.ts signs, after a warm-up, on this machine's Node. `npm run bench:signing`
 */
import { generateKeyPairSync } from 'node:crypto';
import { SignJWT, importJWK, jwtVerify, type JWK } from 'jose';

const ROUNDS = Number(process.env.ROUNDS ?? 2000);
const claims = {
  iss: 'https://abc123.execute-api.eu-west-1.amazonaws.com',
  sub: '4b0c0f7e-5d1a-4f7e-9a53-2f1b8c6d7e90',
  aud: 'authenticated',
  exp: 1_900_000_000,
  iat: 1_899_996_400,
  role: 'authenticated',
  aal: 'aal1',
  amr: [{ method: 'password', timestamp: 1_899_996_400 }],
  session_id: '019ac1f2-7c4e-7a1b-9c2d-3e4f5a6b7c8d',
  email: 'ada@example.com',
  is_anonymous: false,
};
const pairs = {
  RS256: () => generateKeyPairSync('rsa', { modulusLength: 2048 }),
  EdDSA: () => generateKeyPairSync('ed25519'),
  ES256: () => generateKeyPairSync('ec', { namedCurve: 'P-256' }),
} as const;

const median = (values: number[]): number => values.toSorted((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;

console.log(`| algorithm | sign, median µs | verify, median µs | token bytes |`);
console.log(`|---|---|---|---|`);
for (const [alg, make] of Object.entries(pairs)) {
  const { privateKey, publicKey } = make();
  const key = await importJWK(privateKey.export({ format: 'jwk' }) as JWK, alg);
  const verifyKey = await importJWK(publicKey.export({ format: 'jwk' }) as JWK, alg);
  const sign = () => new SignJWT(claims).setProtectedHeader({ alg, typ: 'at+jwt', kid: 'k' }).sign(key);
  for (let n = 0; n < 200; n++) await sign();
  const signs: number[] = [];
  const verifies: number[] = [];
  let token = '';
  for (let n = 0; n < ROUNDS; n++) {
    const started = performance.now();
    token = await sign();
    signs.push(performance.now() - started);
    const checked = performance.now();
    await jwtVerify(token, verifyKey, { algorithms: [alg] });
    verifies.push(performance.now() - checked);
  }
  console.log(`| ${alg} | ${Math.round(median(signs) * 1000)} | ${Math.round(median(verifies) * 1000)} | ${token.length} |`);
}
