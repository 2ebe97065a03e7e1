/**
 * SECURITY-TESTS.md G1–G8 and J3 with fast-check (fixed seed): the Authorization header parser
 * and the access-token verifier (RS256, keys from lib/auth/keys/; test/api/jwt.test.ts runs the
 * same attacks through the server). Every refusal must be AppError('unauthorized'), never another
 * error, so that no token can turn into a 5xx.
 */
import { type JsonWebKey, createPublicKey, generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { type CryptoKey, type JWK, SignJWT, importJWK } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { publishedJwks } from '#lib/auth/keys/verification.ts';
import { currentSigningKey, signAccessToken } from '#lib/auth/signing.ts';
import type { Identity } from '#lib/auth/actor.ts';
import { AUDIENCE, LEGACY_ISSUER, tokenFromAuthorization, verifyAccessToken } from '#lib/auth/tokens.ts';
import { config } from '#lib/core/config.ts';
import { AppError } from '#lib/core/errors.ts';
import { type Forgery, forgeToken } from '../helpers/forge.ts';

const RUNS = { seed: 42, numRuns: 100 } as const;

const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const chars = (alphabet: string) => fc.constantFrom(...alphabet);
const segment = fc.string({ unit: chars(B64URL), minLength: 1, maxLength: 40 });
const jwtLike = fc.tuple(segment, segment, segment).map((parts) => parts.join('.'));
const scheme = fc.mixedCase(fc.constantFrom('token', 'bearer'));

/** JSON, base64url-encoded: the hand-made segments of G1 and G8. */
const b64 = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

/** What `run` throws, or undefined. */
const thrown = (run: () => unknown): unknown => {
  try {
    run();
  } catch (error) {
    return error;
  }
  return undefined;
};

const isUnauthorized = (error: unknown): boolean => error instanceof AppError && error.code === 'unauthorized';

/** The verifier's answer to `token`: the actor, or the error it threw. */
const verdict = async (token: string): Promise<{ actor?: Identity; error?: unknown }> => {
  try {
    return { actor: await verifyAccessToken(token) };
  } catch (error) {
    return { error };
  }
};

/** Refused, and refused the one way the contract allows: 401 unauthorized. */
const expectRefused = async (token: string): Promise<void> => {
  const { actor, error } = await verdict(token);
  expect(actor, `accepted ${token}`).toBeUndefined();
  expect(isUnauthorized(error), `${token} threw ${String(error)}`).toBe(true);
};

// ---------------------------------------------------------------------------------------------

describe('tokenFromAuthorization', () => {
  /** The contract's rule, as an oracle: one scheme word (Token or Bearer, any case), one space, a three-part JWT. */
  const expectedToken = (header: string): string | null => {
    const space = header.indexOf(' ');
    if (space < 0) return null;
    const word = header.slice(0, space);
    const token = header.slice(space + 1);
    if (!/^[A-Za-z]+$/.test(word) || !['token', 'bearer'].includes(word.toLowerCase())) return null;
    const parts = token.split('.');
    return parts.length === 3 && parts.every((p) => p.length > 0 && [...p].every((c) => B64URL.includes(c))) ? token : null;
  };

  const valid = fc.tuple(scheme, jwtLike).map(([s, t]) => `${s} ${t}`);
  const header = fc.oneof(
    valid,
    // One character inserted or removed anywhere.
    fc
      .tuple(valid, fc.nat(), fc.string({ unit: 'binary', minLength: 1, maxLength: 2 }))
      .map(([v, at, c]) => v.slice(0, at % v.length) + c + v.slice(at % v.length)),
    fc.tuple(valid, fc.nat()).map(([v, at]) => v.slice(0, at % v.length) + v.slice((at % v.length) + 1)),
    // Two headers as API Gateway joins them, extra parts, other spacing, an empty token.
    fc.tuple(valid, valid, fc.constantFrom(',', ', ')).map(([a, b, sep]) => a + sep + b),
    fc.tuple(valid, segment).map(([v, extra]) => `${v} ${extra}`),
    fc.tuple(scheme, jwtLike, fc.constantFrom('  ', '\t', ' \t')).map(([s, t, gap]) => s + gap + t),
    fc.tuple(valid, fc.constantFrom(' ', '\t', '\n')).chain(([v, ws]) => fc.constantFrom(ws + v, v + ws)),
    scheme.chain((s) => fc.constantFrom(s, `${s} `, `${s}  `)),
    fc.tuple(scheme, fc.array(segment, { minLength: 1, maxLength: 5 })).map(([s, parts]) => `${s} ${parts.join('.')}`),
    fc
      .tuple(scheme, fc.array(fc.string({ unit: chars(B64URL), maxLength: 4 }), { minLength: 3, maxLength: 3 }))
      .map(([s, parts]) => `${s} ${parts.join('.')}`),
    fc.string(),
    fc.string({ unit: 'binary' }),
  );

  it('returns the token of exactly `Token <jwt>` or `Bearer <jwt>` and refuses everything else with unauthorized', () => {
    let accepted = 0;
    fc.assert(
      fc.property(header, (h) => {
        const want = expectedToken(h);
        if (want !== null) {
          accepted++;
          expect(tokenFromAuthorization(h)).toBe(want);
        } else {
          const error = thrown(() => tokenFromAuthorization(h));
          expect(isUnauthorized(error), `${JSON.stringify(h)} gave ${String(error)}`).toBe(true);
        }
      }),
      {
        ...RUNS,
        numRuns: 300,
        examples: [
          ['Token a.b.c'],
          ['bEaReR a.b.c'],
          ['Token a.b.c, Token a.b.c'],
          ['Token a.b.c,Bearer d.e.f'],
          ['Token a.b.c extra'],
          ['Token '],
          ['Token'],
          ['Basic dXNlcjpwYXNz'],
          ['Token a.b.'],
          ['Token a.b'],
          ['Token a.b.c.d'],
          ['Token  a.b.c'],
          ['Token\ta.b.c'],
          [' Token a.b.c'],
          ['Token a.b.c\n'],
          ['JWT a.b.c'],
        ],
      },
    );
    // The mix must really exercise both sides of the rule.
    expect(accepted).toBeGreaterThan(20);
  });

  it('refuses a missing header', () => {
    expect(isUnauthorized(thrown(() => tokenFromAuthorization(undefined)))).toBe(true);
  });
});

// ---------------------------------------------------------------------------------------------

const epoch = (): number => Math.floor(Date.now() / 1000);

const actorArb = fc.record({
  userUuid: fc.uuid(),
  email: fc
    .string({ unit: chars('abcdefghijklmnopqrstuvwxyz0123456789'), minLength: 1, maxLength: 12 })
    .map((local) => `${local}@example.com`),
  sessionId: fc.uuid(),
});

/** The claims our server puts in an access token, valid now. */
const goodClaims = (): Record<string, unknown> => ({
  sub: randomUUID(),
  aud: AUDIENCE,
  iss: config.issuer,
  iat: epoch(),
  exp: epoch() + 3600,
  email: 'ann@example.com',
  role: AUDIENCE,
  session_id: randomUUID(),
});

/** A token like ours over good claims, with the changes given. */
const forge = (forgery: Forgery = {}): Promise<string> => forgeToken(goodClaims(), forgery);

/** Our published public key, as an attacker can fetch it. */
const ourPublicJwk = async (): Promise<JWK> => {
  const { kid } = await currentSigningKey();
  return (await publishedJwks()).keys.find((k) => k.kid === kid) as JWK;
};

describe('verifyAccessToken', () => {
  let issued = '';
  beforeAll(async () => {
    issued = (await signAccessToken({ userUuid: randomUUID(), email: 'ann@example.com', sessionId: randomUUID() }, new Date())).token;
  });

  it('accepts what signAccessToken issues, with the actor it was issued for and its level', async () => {
    await fc.assert(
      fc.asyncProperty(actorArb, fc.boolean(), async (actor, stepped) => {
        const second = stepped ? { method: 'totp' as const, at: Math.floor(Date.now() / 1000) } : undefined;
        const { token } = await signAccessToken(actor, new Date(), { second });
        expect(await verifyAccessToken(token)).toEqual({ ...actor, aal: stepped ? 'aal2' : 'aal1' });
      }),
      RUNS,
    );
  });

  it('signs deterministically: the same actor and time give the same token, with our kid (refresh retries rely on it)', async () => {
    const actor = { userUuid: randomUUID(), email: 'ann@example.com', sessionId: randomUUID() };
    const now = new Date();
    const first = await signAccessToken(actor, now);
    expect(await signAccessToken(actor, now)).toEqual(first);
    const header = JSON.parse(Buffer.from(first.token.split('.')[0] as string, 'base64url').toString()) as Record<string, unknown>;
    expect(header).toEqual({ alg: 'RS256', typ: 'at+jwt', kid: (await currentSigningKey()).kid });
  });

  it('accepts the unmodified forgery (the control for every refusal below)', async () => {
    const { actor, error } = await verdict(await forge());
    expect(error).toBeUndefined();
    expect(actor?.email).toBe('ann@example.com');
  });

  /**
   * True when `mutated` differs from `token` only in how the signature is spelled: base64url
   * leaves unused low bits in the last character, so a few spellings decode to the same bytes.
   */
  const reencodes = (token: string, mutated: string): boolean => {
    const [h, p, signature = ''] = token.split('.');
    const parts = mutated.split('.');
    return (
      parts.length === 3 &&
      parts[0] === h &&
      parts[1] === p &&
      [...(parts[2] ?? '')].every((c) => B64URL.includes(c)) &&
      Buffer.from(parts[2] ?? '', 'base64url').equals(Buffer.from(signature, 'base64url'))
    );
  };

  /** Every single-character replacement of `token`, split by whether it only re-spells the signature. */
  const mutations = (token: string): { changed: string[]; reencoded: string[] } => {
    const changed: string[] = [];
    const reencoded: string[] = [];
    for (let i = 0; i < token.length; i++) {
      for (const c of `${B64URL}.=+/ %`) {
        if (c === token[i]) continue;
        const mutated = token.slice(0, i) + c + token.slice(i + 1);
        (reencodes(token, mutated) ? reencoded : changed).push(mutated);
      }
    }
    return { changed, reencoded };
  };

  it('refuses every single-character mutation of an issued token that changes its content or signature (G3)', async () => {
    const { changed } = mutations(issued);
    expect(changed.length).toBeGreaterThan(issued.length * 60);
    const accepted: string[] = [];
    const otherErrors: string[] = [];
    for (const token of changed) {
      const { actor, error } = await verdict(token);
      if (actor) accepted.push(token);
      else if (!isUnauthorized(error)) otherErrors.push(`${token}: ${String(error)}`);
    }
    expect(accepted).toEqual([]);
    expect(otherErrors).toEqual([]);
  });

  it('refuses single-character mutations at random places of random issued tokens (J3)', async () => {
    await fc.assert(
      fc.asyncProperty(actorArb, fc.nat(), chars(`${B64URL}.`), async (actor, at, c) => {
        const { token } = await signAccessToken(actor, new Date());
        const i = at % token.length;
        fc.pre(c !== token[i]);
        const mutated = token.slice(0, i) + c + token.slice(i + 1);
        fc.pre(!reencodes(token, mutated));
        await expectRefused(mutated);
      }),
      RUNS,
    );
  });

  // J3: "acceptance iff the token is byte-identical to one we issued". base64url leaves 4 unused
  // bits in the last character of a 256-byte RS256 signature (as of a 64-byte Ed25519 one), so 15
  // other spellings decode to it.
  it('refuses a re-encoded signature (same bytes, different characters): only the issued token is accepted (J3)', async () => {
    const { reencoded } = mutations(issued);
    expect(reencoded).toHaveLength(15);
    const accepted: string[] = [];
    for (const token of reencoded) if ((await verdict(token)).actor) accepted.push(token.slice(-4));
    expect(accepted, `issued signature ends ${issued.slice(-4)}`).toEqual([]);
  });

  it('refuses alg none in any case, with or without a signature (G1)', async () => {
    const signature = issued.split('.')[2] as string;
    await fc.assert(
      fc.asyncProperty(fc.mixedCase(fc.constant('none')), fc.boolean(), async (alg, keepSignature) => {
        const token = `${b64({ alg, typ: 'at+jwt' })}.${b64(goodClaims())}.${keepSignature ? signature : ''}`;
        await expectRefused(token);
      }),
      {
        ...RUNS,
        numRuns: 32,
        examples: [
          ['none', false],
          ['None', false],
          ['NONE', false],
          ['nOnE', false],
        ],
      },
    );
  });

  it('refuses HMAC tokens keyed with our public key (raw, PEM, JWK) or anything else (G2)', async () => {
    const jwk = await ourPublicJwk();
    const pem = createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' }).export({ format: 'pem', type: 'spki' }) as string;
    const secrets = [
      Buffer.from((jwk.n ?? jwk.x) as string, 'base64url'),
      new TextEncoder().encode((jwk.n ?? jwk.x) as string),
      new TextEncoder().encode(pem),
      new TextEncoder().encode(pem.trim()),
      new TextEncoder().encode(JSON.stringify(jwk)),
      randomBytes(48),
    ];
    for (const alg of ['HS256', 'HS384', 'HS512']) {
      for (const secret of secrets) await expectRefused(await forge({ header: { alg }, key: secret }));
    }
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ minLength: 32, maxLength: 64 }), async (key) => {
        await expectRefused(await forge({ header: { alg: 'HS256' }, key }));
      }),
      RUNS,
    );
  });

  it('refuses other asymmetric algorithms, and our kid on a key that is not ours (G2, G9)', async () => {
    const [h, p, s] = (await forge()).split('.') as [string, string, string];
    const header = JSON.parse(Buffer.from(h, 'base64url').toString()) as Record<string, unknown>;
    const ours = header.alg as string;
    for (const alg of ['RS256', 'ES256', 'PS256', 'ES384', 'RS512', 'EdDSA', 'Ed25519', 'EdDSA ', 'eddsa', 'rs256'].filter(
      (a) => a !== ours,
    )) {
      // Our own signature, and a junk one of the length that algorithm would have.
      for (const signature of [s, randomBytes(alg.startsWith('ES') ? 64 : 256).toString('base64url')]) {
        await expectRefused(`${b64({ ...header, alg })}.${p}.${signature}`);
      }
    }
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const foreign = (await importJWK(privateKey.export({ format: 'jwk' }) as JWK, 'RS256')) as CryptoKey;
    await expectRefused(await forge({ key: foreign }));
    await expectRefused(await forge({ key: foreign, header: { kid: undefined } }));
  });

  it('refuses a wrong or missing audience or issuer (G5)', async () => {
    const notOurs = fc.string({ maxLength: 20 }).filter((s) => s !== AUDIENCE);
    await fc.assert(
      fc.asyncProperty(fc.oneof(notOurs, fc.array(notOurs, { minLength: 1, maxLength: 3 })), async (aud) => {
        await expectRefused(await forge({ claims: { aud } }));
      }),
      RUNS,
    );
    await fc.assert(
      fc.asyncProperty(
        fc.string({ maxLength: 20 }).filter((s) => s !== config.issuer && s !== LEGACY_ISSUER),
        async (iss) => {
          await expectRefused(await forge({ claims: { iss } }));
        },
      ),
      RUNS,
    );
    await expectRefused(await forge({ omit: ['aud'] }));
    await expectRefused(await forge({ omit: ['iss'] }));
    // The issuer's URL with a trailing slash, another scheme or a path is another issuer.
    for (const iss of [`${config.issuer}/`, config.issuer.replace(/^http/, 'https'), `${config.issuer}/auth/v1`])
      await expectRefused(await forge({ claims: { iss } }));
  });

  it('takes the issuer every deployment signed as before issue 22 (`roster`) until such tokens expire', async () => {
    expect((await verifyAccessToken(await forge({ claims: { iss: LEGACY_ISSUER } }))).userUuid).toBeDefined();
    await expectRefused(await forge({ claims: { iss: LEGACY_ISSUER, iat: epoch() - 4000, exp: epoch() - 400 } }));
  });

  it('refuses a missing exp, and an exp past by more than the 30 s tolerance (G4)', async () => {
    await expectRefused(await forge({ omit: ['exp'] }));
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 31, max: 10 * 365 * 86_400 }), async (ago) => {
        await expectRefused(await forge({ claims: { iat: epoch() - ago - 3600, exp: epoch() - ago } }));
      }),
      { ...RUNS, examples: [[31], [32]] },
    );
    // Inside the tolerance it still works: the refusals above are about the expiry, not the forgery.
    expect((await verdict(await forge({ claims: { exp: epoch() - 20 } }))).actor).toBeDefined();
  });

  it('refuses claims of the wrong JSON type, never with another error', async () => {
    // Strings must not be numbers, objects, ...; NumericDates must not be strings, objects, ...
    const notString = fc.oneof(
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
      fc.array(fc.string(), { maxLength: 2 }),
      fc.object({ maxDepth: 1 }),
    );
    const notNumber = fc.oneof(
      fc.integer().map(String),
      fc.boolean(),
      fc.constant(null),
      fc.array(fc.integer(), { maxLength: 2 }),
      fc.object({ maxDepth: 1 }),
    );
    const wrongClaim = fc.oneof(
      fc.tuple(fc.constantFrom('sub', 'email', 'session_id'), notString),
      fc.tuple(fc.constantFrom('exp', 'iat'), notNumber),
    );
    await fc.assert(
      fc.asyncProperty(wrongClaim, async ([claim, value]) => {
        await expectRefused(await forge({ claims: { [claim]: value } }));
      }),
      RUNS,
    );
  });

  it('refuses a typ other than at+jwt, or none (G6)', async () => {
    // RFC 9068's media type is case-insensitive and may carry its application/ prefix.
    const meansAtJwt = (typ: string) => (typ.includes('/') ? typ : `application/${typ}`).toLowerCase() === 'application/at+jwt';
    const typ = fc
      .oneof(fc.constantFrom('JWT', 'jwt', 'rt+jwt', 'at+jwt ', 'application/jwt', 'id+jwt', 'JOSE', ''), fc.string({ maxLength: 12 }))
      .filter((t) => !meansAtJwt(t));
    await fc.assert(
      fc.asyncProperty(typ, async (t) => {
        await expectRefused(await forge({ header: { typ: t } }));
      }),
      RUNS,
    );
    const signer = await currentSigningKey();
    await expectRefused(await new SignJWT(goodClaims()).setProtectedHeader({ alg: signer.alg, kid: signer.kid }).sign(signer.key));
  });

  it('refuses tokens of 2, 4 or 5 segments, and arbitrary strings (G8)', async () => {
    const [h, p, s] = issued.split('.') as [string, string, string];
    const counts = fc.constantFrom(2, 4, 5).chain((n) =>
      fc.oneof(
        fc.array(segment, { minLength: n, maxLength: n }).map((parts) => parts.join('.')),
        // The issued token's own parts, cut short or extended.
        fc.constant(n === 2 ? `${h}.${p}` : [h, p, s, ...Array.from({ length: n - 3 }, () => s)].join('.')),
        fc.constant(n === 2 ? `${h}.${s}` : `${issued}${'.'.repeat(n - 3)}`),
      ),
    );
    await fc.assert(
      fc.asyncProperty(counts, (token) => expectRefused(token)),
      RUNS,
    );
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.string(), jwtLike), (token) => expectRefused(token)),
      RUNS,
    );
  });
});
