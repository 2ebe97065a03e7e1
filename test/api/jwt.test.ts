/**
 * SECURITY-TESTS.md G1–G10 through the local server (the handlers the stack deploys): every hostile
 * token gets 401 `unauthorized`, never a 5xx; the JWKS document holds public keys only and lets
 * another service verify our tokens offline; rotation keeps old tokens working until their key
 * is pruned. Claim checks are proven with tokens signed by our own key, so each refusal is about
 * the one thing changed; the control token built the same way is accepted.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type JsonWebKey, createPublicKey, generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type CryptoKey, type JWK, createLocalJWKSet, decodeJwt, decodeProtectedHeader, importJWK, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Forgery, forgeToken } from '../helpers/forge.ts';
import { forgetCachedKeys } from '#lib/auth/keys/cache.ts';
import { readKeysetFile } from '#lib/auth/keys/file-store.ts';
import { rotateLocalKeys } from '#lib/auth/keys/local.ts';
import { LEEWAY_SECONDS, PUBLICATION_LEAD_MS, type PrivateKey, publicKeysOf } from '#lib/auth/keys/model.ts';
import { publishKeys, readPublishedKeys } from '#lib/auth/keys/table-store.ts';
import { currentSigningKey } from '#lib/auth/signing.ts';
import { AUDIENCE, verifyAccessToken } from '#lib/auth/tokens.ts';
import { config } from '#lib/core/config.ts';
import { db } from '#lib/db/service.ts';
import { type TestUser, signUp, useApi } from '../helpers/api.ts';

const api = useApi();

const b64 = (value: unknown): string => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');
const epoch = (): number => Math.floor(Date.now() / 1000);

/** GET /api/auth/user with this exact Authorization header value. */
const whoAmI = (authorization: string) => api.call('GET', '/api/auth/user', { headers: { authorization } });

let tried = 0;
/** Refused the one way the contract allows, with `Token` and with `Bearer`. */
const expectRefused = async (token: string, what = token.slice(0, 60)): Promise<void> => {
  for (const scheme of ['Token', 'Bearer']) {
    tried++;
    const res = await whoAmI(`${scheme} ${token}`);
    expect(res.status, `${what}: ${JSON.stringify(res.body)}`).toBe(401);
    expect(res.body.error.code, what).toBe('unauthorized');
    expect(res.headers.get('www-authenticate'), what).toMatch(/^Token/);
  }
};
const expectAccepted = async (token: string): Promise<void> => {
  const res = await whoAmI(`Token ${token}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
};

let user: TestUser;
/** The claims the server issued to `user`. */
let issued: Record<string, unknown>;

/** A token like the server's for `user` (our key and kid unless told otherwise), with the changes given. */
const forge = (forgery: Forgery = {}): Promise<string> => forgeToken({ ...issued, iat: epoch(), exp: epoch() + 600 }, forgery);

/** A key of the attacker's own, of the algorithm our tokens use (RS256 by default), so only the key differs. */
const attackerKey = async (): Promise<{ key: CryptoKey; jwk: JWK }> => {
  const { alg } = await currentSigningKey();
  const { privateKey, publicKey } =
    alg === 'RS256'
      ? generateKeyPairSync('rsa', { modulusLength: 2048 })
      : alg === 'ES256'
        ? generateKeyPairSync('ec', { namedCurve: 'P-256' })
        : generateKeyPairSync('ed25519');
  return {
    key: (await importJWK(privateKey.export({ format: 'jwk' }) as JWK, alg)) as CryptoKey,
    jwk: publicKey.export({ format: 'jwk' }) as JWK,
  };
};

beforeAll(async () => {
  user = await signUp(api, 'jwt');
  issued = decodeJwt(user.token);
});

describe('the tokens we issue', () => {
  it('are RS256 with our kid, typ at+jwt, and the contract claims; the control forgery is accepted too', async () => {
    const header = decodeProtectedHeader(user.token);
    expect(header).toEqual({ alg: 'RS256', typ: 'at+jwt', kid: (await currentSigningKey()).kid });
    expect(Object.keys(issued).sort()).toEqual([
      'aal',
      'amr',
      'aud',
      'email',
      'exp',
      'iat',
      'is_anonymous',
      'iss',
      'role',
      'session_id',
      'sub',
    ]);
    expect(issued).toMatchObject({
      sub: user.uuid,
      aud: AUDIENCE,
      iss: config.issuer,
      email: user.email,
      aal: 'aal1',
      is_anonymous: false,
    });
    await expectAccepted(user.token);
    await expectAccepted(await forge());
  });
});

describe('amr', () => {
  it('names the password sign-in at the session’s creation; refreshes keep it, and a retried refresh answers the identical pair', async () => {
    const before = epoch();
    const signedIn = await api.call('POST', '/api/auth/signin', { json: { email: user.email, password: user.password } });
    const after = epoch();
    const { access_token: access, refresh_token: refreshToken } = signedIn.body.data.session;
    const [amr] = decodeJwt(access).amr as [{ method: string; timestamp: number }];
    expect(amr.method).toBe('password');
    expect(amr.timestamp).toBeGreaterThanOrEqual(before);
    expect(amr.timestamp).toBeLessThanOrEqual(after);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const refresh = () => api.call('POST', '/api/auth/refresh', { json: { refresh_token: refreshToken } });
    const first = await refresh();
    expect(first.status).toBe(200);
    const claims = decodeJwt(first.body.data.session.access_token);
    expect(claims.iat).toBeGreaterThan(amr.timestamp);
    expect(claims.amr).toEqual([amr]);
    expect((await refresh()).body).toEqual(first.body);
  });
});

describe('G1 alg none', () => {
  it('refuses none in any case, with the signature stripped or kept', async () => {
    const [, payload, signature] = user.token.split('.') as [string, string, string];
    for (const alg of ['none', 'None', 'NONE', 'nOnE']) {
      await expectRefused(`${b64({ alg, typ: 'at+jwt' })}.${payload}.`, `${alg}, no signature`);
      await expectRefused(
        `${b64({ alg, typ: 'at+jwt', kid: decodeProtectedHeader(user.token).kid })}.${payload}.${signature}`,
        `${alg}, signature kept`,
      );
    }
  });
});

describe('G2 algorithm confusion', () => {
  it('refuses HMAC tokens keyed with our public key as raw bytes, PEM or JWK text', async () => {
    const jwks = (await api.call('GET', '/.well-known/jwks.json')).body as { keys: JWK[] };
    const jwk = jwks.keys.find((k) => k.kid === decodeProtectedHeader(user.token).kid) as JWK;
    const pem = createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' }).export({ format: 'pem', type: 'spki' }) as string;
    // The key's public number: an RSA modulus (an Ed25519 or P-256 point where a deployment chose those).
    const material = (jwk.n ?? jwk.x) as string;
    const secrets: [string, Uint8Array][] = [
      ['raw public number', Buffer.from(material, 'base64url')],
      ['public number text', new TextEncoder().encode(material)],
      ['PEM', new TextEncoder().encode(pem)],
      ['PEM trimmed', new TextEncoder().encode(pem.trim())],
      ['JWK JSON', new TextEncoder().encode(JSON.stringify(jwk))],
      ['JWKS JSON', new TextEncoder().encode(JSON.stringify(jwks))],
    ];
    for (const alg of ['HS256', 'HS384', 'HS512']) {
      for (const [name, secret] of secrets) await expectRefused(await forge({ header: { alg }, key: secret }), `${alg} with ${name}`);
    }
  });

  it('refuses RS256, ES256 and PS256 headers with junk signatures', async () => {
    const [, payload] = user.token.split('.') as [string, string];
    const { kid } = decodeProtectedHeader(user.token);
    for (const alg of ['RS256', 'ES256', 'PS256']) {
      for (const size of [64, 256, 512]) {
        await expectRefused(`${b64({ alg, typ: 'at+jwt', kid })}.${payload}.${randomBytes(size).toString('base64url')}`, `${alg}/${size}`);
      }
    }
  });
});

describe('G3 tampering', () => {
  it('refuses changed claims under the original signature', async () => {
    const [header, , signature] = user.token.split('.') as [string, string, string];
    const changes: Record<string, unknown>[] = [
      { sub: randomUUID() },
      { session_id: randomUUID() },
      { exp: (issued.exp as number) + 3600 },
      { role: 'OWNER' },
      { email: 'admin@example.com' },
    ];
    for (const change of changes) await expectRefused(`${header}.${b64({ ...issued, ...change })}.${signature}`, JSON.stringify(change));
  });

  it('refuses the issued token with any one signature bit flipped', async () => {
    const [header, payload, signature] = user.token.split('.') as [string, string, string];
    const bytes = Buffer.from(signature, 'base64url');
    for (const bit of [0, 7, 100, 255, 256, 511]) {
      const flipped = Buffer.from(bytes);
      flipped[bit >> 3] = (flipped[bit >> 3] as number) ^ (1 << (bit & 7));
      await expectRefused(`${header}.${payload}.${flipped.toString('base64url')}`, `bit ${bit}`);
    }
  });
});

describe('G4 time claims', () => {
  it(`refuses a missing, past, string or fractional exp, a future nbf and a future iat (leeway ${LEEWAY_SECONDS} s)`, async () => {
    await expectRefused(await forge({ omit: ['exp'] }), 'no exp');
    await expectRefused(await forge({ claims: { iat: epoch() - 4000, exp: epoch() - LEEWAY_SECONDS - 5 } }), 'exp past the leeway');
    await expectRefused(await forge({ claims: { nbf: epoch() + LEEWAY_SECONDS + 60 } }), 'future nbf');
    await expectRefused(await forge({ claims: { exp: String(epoch() + 600) } }), 'string exp');
    await expectRefused(await forge({ claims: { exp: epoch() + 600.5 } }), 'fractional exp');
    await expectRefused(await forge({ claims: { iat: epoch() + LEEWAY_SECONDS + 60 } }), 'future iat');
    await expectRefused(await forge({ omit: ['iat'] }), 'no iat');
    // Inside the leeway still accepted: the refusals above are about the times, not the forging.
    await expectAccepted(await forge({ claims: { exp: epoch() - 10 } }));
  });

  it('refuses a token that lives longer than the configured lifetime (exp - iat), with our key and kid', async () => {
    const lifetime = config.accessTokenSeconds;
    // Issued a moment ago (within maxTokenAge) but valid for a day: what a stolen key or a signer's bug would mint.
    await expectRefused(await forge({ claims: { iat: epoch() - 5, exp: epoch() - 5 + 86_400 } }), 'a day long');
    await expectRefused(await forge({ claims: { iat: epoch(), exp: epoch() + lifetime + 1 } }), 'one second too long');
    // Exactly the lifetime is what we issue.
    await expectAccepted(await forge({ claims: { iat: epoch(), exp: epoch() + lifetime } }));
  });
});

describe('G5 audience and issuer', () => {
  it('refuses a missing or wrong aud, an aud array without ours, and a wrong or missing iss', async () => {
    await expectRefused(await forge({ omit: ['aud'] }), 'no aud');
    for (const aud of ['anon', 'Authenticated', 'service_role', '', ['anon', 'service_role'], []]) {
      await expectRefused(await forge({ claims: { aud } }), `aud ${JSON.stringify(aud)}`);
    }
    for (const iss of ['roster ', 'https://evil.example', '']) await expectRefused(await forge({ claims: { iss } }), `iss ${iss}`);
    await expectRefused(await forge({ omit: ['iss'] }), 'no iss');
  });
});

describe('G6 token type confusion', () => {
  it('refuses a refresh token as access token, an access token as refresh token, and a foreign typ', async () => {
    for (const scheme of ['Token', 'Bearer']) {
      const res = await whoAmI(`${scheme} ${user.refreshToken}`);
      expect(res.status).toBe(401);
    }
    // An access token is longer than a refresh token may be (512): refused before any lookup.
    const refreshed = await api.call('POST', '/api/auth/refresh', { json: { refresh_token: user.token } });
    expect(user.token.length).toBeGreaterThan(512);
    expect([refreshed.status, Object.keys(refreshed.body.error.fields)]).toEqual([422, ['refresh_token']]);
    for (const typ of ['JWT', 'rt+jwt', 'id+jwt', 'application/jwt', ''])
      await expectRefused(await forge({ header: { typ } }), `typ ${typ}`);
    await expectRefused(await forge({ header: { typ: undefined } }), 'no typ');
  });
});

describe('G7 untrusted key headers', () => {
  let listener: ReturnType<typeof createServer>;
  let hits = 0;
  let base = '';
  beforeAll(async () => {
    listener = createServer((_req, res) => {
      hits++;
      res.end('{"keys":[]}');
    });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(listener.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => listener.close(() => resolve())));

  it('refuses kids that are paths, SQL, unknown or 10 KB long', async () => {
    for (const kid of ['../../etc/passwd', "' OR 1=1 --", randomBytes(32).toString('base64url'), 'k'.repeat(10_240), '', null, 7]) {
      await expectRefused(await forge({ header: { kid } }), `kid ${String(kid).slice(0, 20)}`);
    }
    await expectRefused(await forge({ header: { kid: undefined } }), 'no kid');
  });

  it('never fetches jku or x5u, and never takes an embedded jwk or x5c', async () => {
    const attacker = await attackerKey();
    const { kid } = await currentSigningKey();
    for (const header of [
      { jku: `${base}/jwks.json` },
      { jku: `${base}/jwks.json`, kid: 'attacker' },
      { x5u: `${base}/cert.pem` },
      { jwk: attacker.jwk },
      { jwk: attacker.jwk, kid: undefined },
      { x5c: [randomBytes(300).toString('base64')] },
    ]) {
      await expectRefused(await forge({ header, key: attacker.key }), JSON.stringify(header).slice(0, 60));
      // Our own kid on the attacker's signature, with the key headers too.
      await expectRefused(
        await forge({ header: { ...header, kid }, key: attacker.key }),
        `${JSON.stringify(header).slice(0, 40)} with our kid`,
      );
    }
    expect(hits, 'the loopback listener was contacted').toBe(0);
  });
});

describe('G8 malformed structure', () => {
  it('refuses wrong segment counts, empty segments, bad characters, padding, whitespace, non-JSON headers', async () => {
    const [h, p, s] = user.token.split('.') as [string, string, string];
    const tokens: [string, string][] = [
      ['2 segments', `${h}.${p}`],
      ['4 segments', `${h}.${p}.${s}.${s}`],
      ['JWE-like 5 segments', `${b64({ alg: 'dir', enc: 'A256GCM' })}.${p}.${p}.${p}.${s}`],
      ['empty header', `.${p}.${s}`],
      ['empty payload', `${h}..${s}`],
      ['empty signature', `${h}.${p}.`],
      ['base64 +/', `${h}.${p}.${s.replace(/^./, '+')}`],
      ['padding', `${h}.${p}.${s}==`],
      ['inner space', `${h}. ${p}.${s}`],
      ['tab', `${h}.${p}\t.${s}`],
      ['non-JSON header', `${b64('not json')}.${p}.${s}`],
      ['JSON array header', `${b64([1, 2])}.${p}.${s}`],
      ['non-JSON payload', `${h}.${b64('hello')}.${s}`],
      ['7 KB payload', `${h}.${b64({ ...issued, pad: 'x'.repeat(5000) })}.${s}`],
    ];
    for (const [what, token] of tokens) {
      tried++;
      const res = await whoAmI(`Token ${token}`);
      expect(res.status, what).toBe(401);
    }
  });

  it('refuses a 100 KB token: the HTTP layer before any handler (as API Gateway would), the verifier too', async () => {
    const [h, , s] = user.token.split('.') as [string, string, string];
    const huge = `${h}.${b64({ ...issued, pad: 'x'.repeat(100_000) })}.${s}`;
    tried++;
    const res = await whoAmI(`Token ${huge}`);
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    await expect(verifyAccessToken(huge)).rejects.toMatchObject({ code: 'unauthorized' });
  });
});

describe('G10 GET /.well-known/jwks.json', () => {
  it('is a bare JWK Set of public RSA keys, each with a kid, public and briefly cacheable, without auth', async () => {
    const res = await api.call('GET', '/.well-known/jwks.json', { headers: { authorization: 'Token not.a.token' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('public, max-age=60');
    expect(Object.keys(res.body)).toEqual(['keys']);
    const keys = res.body.keys as Record<string, unknown>[];
    expect(keys.length).toBeGreaterThan(0);
    for (const key of keys) {
      for (const member of ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k']) expect(key).not.toHaveProperty(member);
      expect(Object.keys(key).sort()).toEqual(['alg', 'e', 'kid', 'kty', 'n', 'use']);
      expect(key).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig', e: 'AQAB' });
      expect(Buffer.from(key.n as string, 'base64url')).toHaveLength(256);
      expect(key.kid).toMatch(/^[A-Za-z0-9_-]{43}$/);
    }
    expect(new Set(keys.map((k) => k.kid)).size).toBe(keys.length);
    expect(keys.map((k) => k.kid)).toContain(decodeProtectedHeader(user.token).kid);
  });

  it('lets another service verify our tokens offline, as docs/keys.md tells integrators', async () => {
    const jwks = createLocalJWKSet((await api.call('GET', '/.well-known/jwks.json')).body);
    const { payload } = await jwtVerify(user.token, jwks, {
      algorithms: ['RS256'],
      issuer: config.issuer,
      audience: AUDIENCE,
      typ: 'at+jwt',
      requiredClaims: ['exp', 'iat', 'sub', 'session_id'],
    });
    expect(payload.sub).toBe(user.uuid);
  });

  it('answers other methods with 405', async () => {
    const res = await api.call('POST', '/.well-known/jwks.json');
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET');
  });
});

// Last: it rotates this file's keys.
describe('G9 rotation', () => {
  const signIn = async (): Promise<string> => {
    const res = await api.call('POST', '/api/auth/signin', { json: { email: user.email, password: user.password } });
    expect(res.status).toBe(200);
    return res.body.data.session.access_token as string;
  };
  const jwksKids = async (): Promise<string[]> =>
    ((await api.call('GET', '/.well-known/jwks.json')).body.keys as { kid: string }[]).map((k) => k.kid);

  it('keeps old tokens working, signs new ones with the new key once every JWKS cache has it, refuses a kid swap, and ends old tokens once the key is pruned', async () => {
    const before = await signIn();
    const oldKid = decodeProtectedHeader(before).kid as string;

    const rotated = await rotateLocalKeys(db(), config.dataDir, new Date());
    const oldKey = rotated.keys.find((k) => k.kid === oldKid) as PrivateKey;
    expect(oldKey.retiredAt).toBeDefined();
    const newKid = (rotated.keys.find((k) => k.kid !== oldKid) as PrivateKey).kid;

    await expectAccepted(before);
    await expectAccepted(user.token);
    // Published at once (the JWKS has it), but it does not sign yet: a JWKS cached elsewhere just
    // before the rotation may be served for PUBLICATION_LEAD_MS (max-age 60 s plus our 10 s cache).
    expect((await jwksKids()).sort()).toEqual([oldKid, newKid].sort());
    const during = await signIn();
    expect(decodeProtectedHeader(during).kid).toBe(oldKid);
    await expectAccepted(during);

    // Time passes: the new key has been published that long. Backdate its publication in the item.
    const published = (await readPublishedKeys(db(), true)) ?? [];
    const ripe = new Date(Date.now() - PUBLICATION_LEAD_MS - 1000).toISOString();
    await publishKeys(
      db(),
      published.map((k) => (k.kid === newKid ? { ...k, publishedAt: ripe } : k)),
      new Date(),
    );
    forgetCachedKeys(); // as every process does within its cache age
    const after = await signIn();
    expect(decodeProtectedHeader(after).kid).toBe(newKid);
    await expectAccepted(after);
    await expectAccepted(during);
    expect((await jwksKids()).sort()).toEqual([oldKid, newKid].sort());

    // The new kid on a token the old key signed.
    await expectRefused(await forge({ header: { kid: newKid }, key: await importJWK(oldKey.privateJwk, oldKey.alg) }), 'kid=new, old key');
    // And the other way round.
    const newKey = rotated.keys.find((k) => k.kid === newKid) as PrivateKey;
    await expectRefused(await forge({ header: { kid: oldKid }, key: await importJWK(newKey.privateJwk, newKey.alg) }), 'kid=old, new key');

    // Time passes: the old key retired longer ago than a token lives. Backdate it in both stores.
    const longAgo = new Date(Date.now() - (config.accessTokenSeconds + LEEWAY_SECONDS + 60) * 1000).toISOString();
    const keyset = (await readKeysetFile(config.dataDir)) as { keys: PrivateKey[] };
    const aged = { keys: keyset.keys.map((k) => (k.kid === oldKid ? { ...k, retiredAt: longAgo } : k)) };
    await writeFile(join(config.dataDir, 'signing-keys.json'), JSON.stringify(aged), { mode: 0o600 });
    await publishKeys(db(), publicKeysOf(aged), new Date());
    forgetCachedKeys(); // as every process does within its cache age
    await expectRefused(before, 'token of an expired key');
    await expectRefused(user.token, 'first token of an expired key');
    expect(await jwksKids()).toEqual([newKid]);

    // The next rotation prunes it for good.
    const pruned = await rotateLocalKeys(db(), config.dataDir, new Date());
    expect(pruned.keys.map((k) => k.kid)).not.toContain(oldKid);
    expect(await jwksKids()).not.toContain(oldKid);
    await expectRefused(before, 'token of a pruned key');
    await expectAccepted(after);
  });
});

describe('cold start (no keys in memory: the signature is checked with the keys read beside the session)', () => {
  /** As a new function instance: the public keys not loaded yet. */
  const coldRefused = async (token: string, what: string) => {
    forgetCachedKeys();
    await expectRefused(token, `${what} (cold)`);
  };

  it('refuses a token signed by another key, tampered claims, and an overlong lifetime, as a warm function does', async () => {
    const { key } = await attackerKey();
    await coldRefused(await forge({ key }), 'attacker key, our kid');
    const [header, , signature] = user.token.split('.') as [string, string, string];
    const other = Buffer.from(JSON.stringify({ ...issued, sub: randomUUID() })).toString('base64url');
    await coldRefused(`${header}.${other}.${signature}`, 'changed sub');
    await coldRefused(await forge({ claims: { iat: epoch(), exp: epoch() + config.accessTokenSeconds + 60 } }), 'too long');
    // A token of the current key (G9 above retired the one `user` got).
    const fresh = await signUp(api, 'cold');
    forgetCachedKeys();
    await expectAccepted(fresh.token);
  });

  it('answers an invalid path or body only to a token that verifies: a forged one gets 401 first', async () => {
    const { key } = await attackerKey();
    const forged = await forge({ key });
    forgetCachedKeys();
    const bad = await api.call('POST', '/api/teams', { token: forged, json: { name: '', slug: 'NOT A SLUG' } });
    expect(bad.status, JSON.stringify(bad.body)).toBe(401);
    forgetCachedKeys();
    const noTeam = await api.call('GET', '/api/teams/no-such-team', { token: forged });
    expect(noTeam.status, JSON.stringify(noTeam.body)).toBe(401);
    // The same requests with a real token: the errors of the request itself.
    const real = await signUp(api, 'cold-real');
    forgetCachedKeys();
    expect((await api.call('POST', '/api/teams', { token: real.token, json: { name: '', slug: 'NOT A SLUG' } })).status).toBe(422);
    forgetCachedKeys();
    expect((await api.call('GET', '/api/teams/no-such-team', { token: real.token })).status).toBe(404);
  });
});

describe('corpus', () => {
  it('tried every hostile token above with both schemes: none accepted, none a 5xx', async ({ annotate }) => {
    expect(tried).toBeGreaterThan(150);
    await annotate(`${tried} hostile requests, all 401 (the 100 KB token: 4xx before any handler); leeway ${LEEWAY_SECONDS} s`);
  });
});
