/**
 * Roster's tokens as other people's verifiers see them (docs/protect-your-api.md): the issuer's
 * OpenID discovery document, AWS's own verifier library (aws-jwt-verify) finding the keys through
 * it, and API Gateway's JWT authorizer walked step by step (test/helpers/gateway-authorizer.ts).
 * aws-jwt-verify speaks https only: the local server is reached through an https proxy on
 * loopback, and the issuer is that proxy's URL, as a deployment's is its API's URL.
 */
import type { Server } from 'node:https';
import { JwtVerifier } from 'aws-jwt-verify';
import { SimpleFetcher } from 'aws-jwt-verify/https';
import { SimpleJwksCache } from 'aws-jwt-verify/jwk';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '#infra/dynamodb-local.ts';
import { type TestUser, signUp, useApi } from '../helpers/api.ts';
import { type AuthorizerSettings, authorize } from '../helpers/gateway-authorizer.ts';
import { type Certificate, loopbackCertificate, tlsProxy } from '../helpers/tls.ts';

// The issuer, read by lib/core/config.ts when the server loads (after this).
const httpsPort = await freePort();
const issuer = `https://127.0.0.1:${httpsPort}`;
process.env.TOKEN_ISSUER = issuer;

const api = useApi();
let certificate: Certificate;
let proxy: Server;
let user: TestUser;

beforeAll(async () => {
  certificate = loopbackCertificate();
  proxy = await tlsProxy(api.url, certificate, httpsPort);
  user = await signUp(api, 'gateway');
});
afterAll(() => new Promise<void>((resolve) => proxy.close(() => resolve())));

/** An https client that trusts the loopback certificate (aws-jwt-verify's own fetcher). */
const fetcher = () => new SimpleFetcher({ defaultRequestOptions: { ca: certificate.cert } });
const getJson = async (url: string): Promise<Record<string, unknown>> =>
  JSON.parse(Buffer.from(await fetcher().fetch(url)).toString('utf8')) as Record<string, unknown>;
/** A verifier as a user's service makes one, from the discovery document; a new one has no keys cached. */
const verifierOf = async () => {
  const discovery = await getJson(`${issuer}/.well-known/openid-configuration`);
  return JwtVerifier.create(
    { issuer: discovery.issuer as string, audience: 'authenticated', jwksUri: discovery.jwks_uri as string },
    { jwksCache: new SimpleJwksCache({ fetcher: fetcher() }) },
  );
};
const epoch = () => Math.floor(Date.now() / 1000);
/** A token signed with our key (test/helpers/forge.ts, loaded late: it loads the settings). */
const forge = async (changes: { claims?: Record<string, unknown> }) =>
  (await import('../helpers/forge.ts')).forgeToken({ ...decodeJwt(user.token), iat: epoch(), exp: epoch() + 600 }, changes);

describe('the OpenID discovery document', () => {
  it('names the issuer of the tokens and where their keys are, over https at {issuer}/.well-known/openid-configuration', async () => {
    const discovery = await getJson(`${issuer}/.well-known/openid-configuration`);
    expect(discovery).toMatchObject({
      issuer,
      jwks_uri: `${issuer}/.well-known/jwks.json`,
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['RS256', 'EdDSA'],
    });
    expect(decodeJwt(user.token).iss).toBe(issuer);
    const res = await api.call('GET', '/.well-known/openid-configuration');
    expect(res.headers.get('cache-control')).toBe('public, max-age=3600');
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
  });
});

describe('aws-jwt-verify, through the discovery document', () => {
  it('accepts a Roster access token, with its claims', async () => {
    const payload = await (await verifierOf()).verify(user.token);
    expect(payload).toMatchObject({ sub: user.uuid, iss: issuer, aud: 'authenticated', email: user.email });
  });

  it('refuses tampered, expired and wrong-audience tokens', async () => {
    const verifier = await verifierOf();
    const [h, , s] = user.token.split('.') as [string, string, string];
    const tampered = `${h}.${Buffer.from(JSON.stringify({ ...decodeJwt(user.token), sub: 'someone-else' })).toString('base64url')}.${s}`;
    await expect(verifier.verify(tampered)).rejects.toThrow(/signature/i);
    await expect(verifier.verify(await forge({ claims: { iat: epoch() - 7200, exp: epoch() - 3600 } }))).rejects.toThrow(/expired/i);
    await expect(verifier.verify(await forge({ claims: { aud: 'another-app' } }))).rejects.toThrow(/audience/i);
    await expect(verifier.verify(await forge({ claims: { iss: 'https://someone-else.example.com' } }))).rejects.toThrow(/issuer/i);
  });

  it('refuses a token of a revoked key once it reads the key set again', async () => {
    const [{ db }, { rotateLocalKeys }, { revokeKey }, { config }, { forgetCachedKeys }] = await Promise.all([
      import('#lib/db/service.ts'),
      import('#lib/auth/keys/local.ts'),
      import('#lib/auth/key-revocation.ts'),
      import('#lib/core/config.ts'),
      import('#lib/auth/keys/cache.ts'),
    ]);
    const old = decodeProtectedHeader(user.token).kid as string;
    const cached = await verifierOf();
    await cached.verify(user.token);
    // A rotation two minutes ago (the new key signs), then the old key revoked, as after a leak.
    await rotateLocalKeys(db(), config.dataDir, new Date(Date.now() - 120_000));
    expect(await revokeKey(db(), old, new Date())).toMatchObject({ outcome: 'revoked' });
    forgetCachedKeys();
    await expect((await verifierOf()).verify(user.token)).rejects.toThrow(/kid/i);
    // What a verifier that cached the key before the revocation does: it keeps it until it reads the
    // key set again (docs/protect-your-api.md says so), here until the process restarts.
    await expect(cached.verify(user.token)).resolves.toBeDefined();
    // A token of the new key verifies through the same document.
    const fresh = await signUp(api, 'after-rotation');
    await expect((await verifierOf()).verify(fresh.token)).resolves.toMatchObject({ sub: fresh.uuid });
  });
});

describe('the switch from EdDSA (deployments that signed EdDSA before RS256 became the default)', () => {
  it('lists the old EdDSA key beside the RS256 one, and both verifiers take the RS256 tokens', async () => {
    const [{ db }, { newKey, publicKeysOf }, { publishKeys, readPublishedKeys }, { forgetCachedKeys }] = await Promise.all([
      import('#lib/db/service.ts'),
      import('#lib/auth/keys/model.ts'),
      import('#lib/auth/keys/table-store.ts'),
      import('#lib/auth/keys/cache.ts'),
    ]);
    const old = await newKey('EdDSA', new Date(Date.now() - 86_400_000));
    await publishKeys(db(), [...((await readPublishedKeys(db(), true)) ?? []), ...publicKeysOf({ keys: [old] })], new Date());
    forgetCachedKeys();
    const jwks = await getJson(`${issuer}/.well-known/jwks.json`);
    expect((jwks.keys as { kid: string; alg: string }[]).map((k) => k.alg).sort()).toEqual(['EdDSA', 'RS256']);
    const fresh = await signUp(api, 'switch');
    expect(decodeProtectedHeader(fresh.token).alg).toBe('RS256');
    await expect((await verifierOf()).verify(fresh.token)).resolves.toMatchObject({ sub: fresh.uuid });
    const verdict = authorize(`Bearer ${fresh.token}`, { issuer, audience: ['authenticated'], jwks: jwks as AuthorizerSettings['jwks'] });
    expect(verdict.allowed).toBe(true);
  });
});

describe("API Gateway's JWT authorizer, step by step", () => {
  const settings = async (): Promise<AuthorizerSettings> => {
    const discovery = await getJson(`${issuer}/.well-known/openid-configuration`);
    return { issuer, audience: ['authenticated'], jwks: (await getJson(discovery.jwks_uri as string)) as AuthorizerSettings['jwks'] };
  };

  it('lets a Roster token through, with or without the Bearer prefix, and hands on its claims', async () => {
    const fresh = await signUp(api, 'gateway-ok');
    for (const header of [`Bearer ${fresh.token}`, fresh.token]) {
      const verdict = authorize(header, await settings());
      expect(verdict).toMatchObject({ allowed: true, claims: { sub: fresh.uuid, aud: 'authenticated', iss: issuer } });
    }
  });

  it('stops each step with the token that breaks it', async () => {
    const s = await settings();
    const fresh = await signUp(api, 'gateway-steps');
    const token = fresh.token;
    const [h, p, sig] = token.split('.') as [string, string, string];
    const claims = decodeJwt(token);
    const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const steps: [string | undefined, string][] = [
      [undefined, 'identity source: no Authorization header'],
      ['Bearer not-a-token', 'decode: not three segments'],
      [`Bearer ${b64({ ...decodeProtectedHeader(token), alg: 'EdDSA' })}.${p}.${sig}`, 'algorithm: EdDSA is not an RSA algorithm'],
      [`Bearer ${b64({ ...decodeProtectedHeader(token), kid: 'unknown' })}.${p}.${sig}`, 'kid: no key of the jwks_uri has it'],
      [`Bearer ${h}.${b64({ ...claims, sub: 'someone-else' })}.${sig}`, 'signature'],
    ];
    for (const [header, step] of steps) expect(authorize(header, s), step).toEqual({ allowed: false, step });
    expect(authorize(`Bearer ${token}`, { ...s, issuer: 'https://other.example.com' })).toEqual({ allowed: false, step: 'iss' });
    expect(authorize(`Bearer ${token}`, { ...s, audience: ['another-app'] })).toEqual({ allowed: false, step: 'aud or client_id' });
    expect(authorize(`Bearer ${token}`, { ...s, now: new Date(((claims.exp as number) + 1) * 1000) })).toEqual({
      allowed: false,
      step: 'exp',
    });
    expect(authorize(`Bearer ${token}`, { ...s, now: new Date(((claims.iat as number) - 5) * 1000) })).toEqual({
      allowed: false,
      step: 'iat',
    });
    // Roster's access tokens carry no scope: a route with authorizationScopes refuses them (configure none).
    expect(authorize(`Bearer ${token}`, { ...s, scopes: ['orders:read'] })).toEqual({ allowed: false, step: 'scope' });
  });
});
