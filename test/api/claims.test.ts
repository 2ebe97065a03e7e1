/**
 * The access token's claims as Supabase's auth-js reads them (issue 12 §8): a token signed by
 * signAccessToken (keys from DynamoDB Local, as every unit test of tokens) carries exactly the
 * claims of `AccessTokenClaims`, and that type is one auth-js's `JwtPayload` accepts.
 */
import { randomUUID } from 'node:crypto';
import type { JwtPayload } from '@supabase/auth-js';
import { decodeJwt } from 'jose';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { type AccessTokenClaims, signAccessToken } from '#lib/auth/signing.ts';
import { AUDIENCE } from '#lib/auth/tokens.ts';
import { config } from '#lib/core/config.ts';

describe('access token claims', () => {
  it('are GoTrue’s: aal1, amr password at the sign-in time, is_anonymous false; typ, iss and aud unchanged', async () => {
    const actor = { userUuid: randomUUID(), email: 'ann@example.com', sessionId: randomUUID() };
    const signedInAt = new Date('2026-03-01T10:00:00.750Z');
    const now = new Date('2026-03-01T12:30:00.000Z');
    const notAfter = Math.floor(now.getTime() / 1000) + 60;
    const { token, expiresAt } = await signAccessToken(actor, now, { notAfter, authenticatedAt: signedInAt });

    const claims: AccessTokenClaims = {
      iss: config.issuer,
      sub: actor.userUuid,
      aud: AUDIENCE,
      exp: notAfter,
      iat: Math.floor(now.getTime() / 1000),
      role: AUDIENCE,
      aal: 'aal1',
      amr: [{ method: 'password', timestamp: Math.floor(signedInAt.getTime() / 1000) }],
      session_id: actor.sessionId,
      email: actor.email,
      is_anonymous: false,
    };
    // The token carries exactly these claims, and their type is one auth-js accepts.
    expect(decodeJwt(token)).toStrictEqual(claims);
    expect(expiresAt).toBe(notAfter);
    expectTypeOf(claims).toExtend<JwtPayload>();
    // The check bites: without `aal` (before issue 12) auth-js's type refuses the claims.
    expectTypeOf<Omit<AccessTokenClaims, 'aal'>>().not.toExtend<JwtPayload>();
  });

  it('take the sign-in time from the session, not the clock: the same session and time sign the same token', async () => {
    const actor = { userUuid: randomUUID(), email: 'ann@example.com', sessionId: randomUUID() };
    const signedInAt = new Date(Date.now() - 3_600_000);
    const now = new Date();
    const first = await signAccessToken(actor, now, { authenticatedAt: signedInAt });
    expect(await signAccessToken(actor, now, { authenticatedAt: new Date(signedInAt) })).toEqual(first);
    // Without a session, the sign-in is now.
    expect(decodeJwt((await signAccessToken(actor, now)).token).amr).toEqual([
      { method: 'password', timestamp: Math.floor(now.getTime() / 1000) },
    ]);
  });
});
