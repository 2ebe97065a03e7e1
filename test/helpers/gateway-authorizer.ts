import { type JsonWebKey, createPublicKey, verify } from 'node:crypto';

/**
 * API Gateway's JWT authorizer for HTTP APIs, step by step as its documentation lists them
 * ("Controlling access to HTTP APIs with JWT authorizers", "Validating JWTs"), written here so that
 * Roster's tokens can be put through it offline. Nothing of Roster's own verifier is used.
 *
 * 1. The identity source (the Authorization header) holds a token; a `Bearer ` prefix is dropped.
 * 2. The token decodes.
 * 3. Its algorithm and signature check out against the key of its `kid` among those at the
 *    issuer's `jwks_uri`. Only RSA algorithms are supported.
 * 4. Claims: `kid` matches a key; `iss` is the authorizer's issuer; `aud` or `client_id` is one of
 *    its audiences; `exp` is after now; `nbf` and `iat` are before now; `scope` or `scp` holds one
 *    of the route's authorization scopes, if it has any.
 */
export interface AuthorizerSettings {
  issuer: string;
  audience: readonly string[];
  /** The issuer's keys: its /.well-known/openid-configuration's `jwks_uri`, fetched. */
  jwks: { keys: (JsonWebKey & { kid?: string; alg?: string })[] };
  /** The route's authorizationScopes; none: any valid token. */
  scopes?: readonly string[];
  now?: Date;
}

export type AuthorizerVerdict = { allowed: true; claims: Record<string, unknown> } | { allowed: false; step: string };

const RSA_HASHES: Readonly<Record<string, string>> = { RS256: 'sha256', RS384: 'sha384', RS512: 'sha512' };

const json = (segment: string): Record<string, unknown> | undefined => {
  try {
    const value: unknown = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
};

export const authorize = (authorization: string | undefined, settings: AuthorizerSettings): AuthorizerVerdict => {
  const refused = (step: string): AuthorizerVerdict => ({ allowed: false, step });
  // 1. The identity source.
  if (!authorization) return refused('identity source: no Authorization header');
  const token = authorization.replace(/^Bearer /, '');
  // 2. Decode.
  const parts = token.split('.');
  if (parts.length !== 3) return refused('decode: not three segments');
  const [h = '', p = '', s = ''] = parts;
  const header = json(h);
  const claims = json(p);
  if (!header || !claims) return refused('decode: header or payload is not a JSON object');
  // 3. Algorithm and signature, with the key of the token's kid.
  const hash = typeof header.alg === 'string' ? RSA_HASHES[header.alg] : undefined;
  if (!hash) return refused(`algorithm: ${String(header.alg)} is not an RSA algorithm`);
  const jwk = settings.jwks.keys.find((k) => k.kid === header.kid);
  if (!jwk) return refused('kid: no key of the jwks_uri has it');
  if (jwk.kty !== 'RSA') return refused('algorithm: the key is not an RSA key');
  if (!verify(hash, Buffer.from(`${h}.${p}`), createPublicKey({ key: jwk, format: 'jwk' }), Buffer.from(s, 'base64url')))
    return refused('signature');
  // 4. Claims.
  const now = Math.floor((settings.now ?? new Date()).getTime() / 1000);
  if (claims.iss !== settings.issuer) return refused('iss');
  const audiences = [claims.aud, claims.client_id].flat().filter((a): a is string => typeof a === 'string');
  if (!audiences.some((a) => settings.audience.includes(a))) return refused('aud or client_id');
  if (typeof claims.exp !== 'number' || claims.exp <= now) return refused('exp');
  if (claims.nbf !== undefined && (typeof claims.nbf !== 'number' || claims.nbf > now)) return refused('nbf');
  if (claims.iat !== undefined && (typeof claims.iat !== 'number' || claims.iat > now)) return refused('iat');
  if (settings.scopes?.length) {
    const granted = [claims.scope, claims.scp]
      .flatMap((v) => (typeof v === 'string' ? v.split(' ') : Array.isArray(v) ? v : []))
      .filter((v): v is string => typeof v === 'string');
    if (!settings.scopes.some((scope) => granted.includes(scope))) return refused('scope');
  }
  return { allowed: true, claims };
};
