import * as z from 'zod/mini';
import { type Claims, type ClientInfo, claimsOf, readAsActor } from '#lib/auth/session-items.ts';
import { config } from '#lib/core/config.ts';
import { AppError } from '#lib/core/errors.ts';
import type { Db } from '#lib/db/service.ts';
import type { StaticAnswer } from '#lib/http/static.ts';
import { validate } from '#lib/http/validation.ts';
import { type SecurityView, securityPage, signInPage } from '#lib/pages/security-page.ts';
import { EnrolBody, RecoveryCodeBody, RenameFactorBody, SignInBody, TotpCode } from '#lib/wire/schemas.ts';
import { factorView } from '#lib/wire/views.ts';
import { signOut } from '../account.ts';
import { signIn } from '../users.ts';
import { factorsOf } from './factor-list.ts';
import { enrolFactor, removeFactor } from './factors.ts';
import { regenerateRecoveryCodes, useRecoveryCode } from './recovery-codes.ts';
import { challengeFactor, verifyFactor } from './step-up.ts';

/**
 * GET and POST /account/security (docs/mfa.md, "The account security page"): the signed-in user's
 * factors, recovery codes and passkeys, through the same use cases as the API. The session rides
 * in an HttpOnly, SameSite=Strict cookie holding its access token (an hour; then the page asks for
 * a sign-in again); every POST must come from the page's own origin.
 */

/**
 * On https the cookie is `__Host-` prefixed (Secure, Path=/, no Domain): a sibling subdomain cannot
 * plant one for this host. Plain http (local work only) cannot have that prefix.
 */
const HTTPS = config.publicUrl.startsWith('https:');
const PAGE_ORIGIN = new URL(config.publicUrl).origin;
const COOKIE = HTTPS ? '__Host-roster_security' : 'roster_security';
const ATTRIBUTES = HTTPS ? 'Path=/; HttpOnly; SameSite=Strict; Secure' : 'Path=/account/security; HttpOnly; SameSite=Strict';
const setCookie = (token: string): Record<string, string> => ({
  'set-cookie': `${COOKIE}=${token}; ${ATTRIBUTES}; Max-Age=${config.accessTokenSeconds}`,
});
const clearCookie = { 'set-cookie': `${COOKIE}=; ${ATTRIBUTES}; Max-Age=0` };

const withHeaders = (answer: StaticAnswer, headers: Record<string, string>): StaticAnswer => ({
  ...answer,
  headers: { ...answer.headers, ...headers },
});

/** The cookie's access token, from API Gateway's `cookies` (name=value each). */
const tokenOf = (cookies: readonly string[] | undefined): string | undefined =>
  cookies
    ?.map((c) => c.trim())
    .find((c) => c.startsWith(`${COOKIE}=`))
    ?.slice(COOKIE.length + 1) || undefined;

/** The signed-in page for `token` (its session read, as on every API call), with `extra`. Throws `unauthorized`. */
const render = async (
  db: Db,
  token: string,
  extra: Pick<SecurityView, 'message' | 'enrolment' | 'recoveryCodes'> = {},
): Promise<StaticAnswer> => {
  const { claims } = await claimsOf(token);
  const {
    actor,
    items: [u],
  } = await readAsActor(db, claims, (userUuid) => [[db.entities.user, { userUuid }]] as const);
  if (!u) throw new AppError('unauthorized');
  return securityPage({ email: u.email, aal: actor.aal, factors: factorsOf(u).map(factorView), token, ...extra });
};

const SIGNED_OUT = 'Your session has ended: sign in again.';

/** What the script's passkey ceremony did, as `adopt` reports it. */
const ADOPTED: Record<string, string> = {
  'signed-in': 'Signed in with your passkey.',
  'stepped-up': 'Second factor proven with your passkey.',
  added: 'The passkey is added.',
};
/** A recovery code as shown (lib/auth/recovery-codes.ts): four groups of four. */
const RECOVERY_CODE = /^[0-9a-z]{4}(-[0-9a-z]{4}){3}$/u;

/** GET /account/security. */
export const securityGet = async (db: Db, cookies: readonly string[] | undefined): Promise<StaticAnswer> => {
  const token = tokenOf(cookies);
  if (!token) return signInPage();
  try {
    return await render(db, token);
  } catch (error) {
    if (error instanceof AppError && error.code === 'unauthorized') return withHeaders(signInPage(SIGNED_OUT), clearCookie);
    throw error;
  }
};

const CodeField = z.object({ code: TotpCode });
const FactorField = z.object({ factor: z.uuid({ error: 'must name one of your factors' }) });

/** A TOTP factor's challenge and verify in one step (the page has no use for the challenge alone). */
const proveTotp = async (db: Db, claims: Claims, factorId: string, code: string, now: Date) => {
  const challenge = await challengeFactor(db, claims, factorId, {}, now);
  return verifyFactor(db, claims, factorId, { challenge_id: challenge.id, code }, now);
};

/** What an action does, given the cookie's token: the page to show next (and a new token, when the session's changed). */
const act = async (db: Db, action: string, fields: Map<string, string>, token: string, now: Date): Promise<StaticAnswer> => {
  const { claims } = await claimsOf(token);
  const field = (name: string) => fields.get(name) ?? '';
  switch (action) {
    case 'sign-out':
      await signOut(db, claims, 'local');
      return withHeaders(signInPage('Signed out.'), clearCookie);
    case 'step-up':
    case 'activate-totp': {
      const { factor } = validate(FactorField, { factor: field('factor') });
      const { code } = validate(CodeField, { code: field(action === 'step-up' ? 'code' : 'activation-code') });
      const raised = await proveTotp(db, claims, factor, code, now);
      const next = raised.session.access_token;
      const message = action === 'step-up' ? 'Second factor proven.' : 'The authenticator app is active.';
      return withHeaders(
        await render(db, next, { message: { text: message, kind: 'done' }, recoveryCodes: raised.recovery_codes }),
        setCookie(next),
      );
    }
    case 'recovery-code': {
      const { code } = validate(RecoveryCodeBody, { code: field('recovery') });
      const next = (await useRecoveryCode(db, claims, code, now)).session.access_token;
      return withHeaders(
        await render(db, next, { message: { text: 'Recovery code used: this session is aal2.', kind: 'done' } }),
        setCookie(next),
      );
    }
    case 'enrol-totp': {
      const { friendly_name } = validate(RenameFactorBody, { friendly_name: field('totp-name') || 'Authenticator app' });
      const enrolled = await enrolFactor(db, claims, validate(EnrolBody, { factor_type: 'totp', friendly_name }), now);
      if (enrolled.type !== 'totp') throw new AppError('internal');
      return render(db, token, { enrolment: { factorId: enrolled.id, secret: enrolled.totp.secret, qrCode: enrolled.totp.qr_code } });
    }
    case 'regenerate-codes': {
      const { recovery_codes } = await regenerateRecoveryCodes(db, claims, now);
      return render(db, token, {
        recoveryCodes: recovery_codes,
        message: { text: 'New recovery codes: the old ones no longer work.', kind: 'done' },
      });
    }
    case 'remove-factor': {
      const { factor } = validate(FactorField, { factor: field('factor') });
      await removeFactor(db, claims, factor, now);
      return render(db, token, { message: { text: 'The factor is removed.', kind: 'done' } });
    }
    default:
      throw new AppError('validation_failed', 'No such action.');
  }
};

/**
 * POST /account/security: a form of the page. Only from the page itself (Sec-Fetch-Site
 * `same-origin`, or the deployment's Origin; with the SameSite=Strict cookie, another site can
 * neither read nor drive the page, nor sign a visitor into another account). `sign-in` takes e-mail and password; `adopt` takes an access token the page's
 * script got from a passkey (a sign-in or a step-up) and keeps it in the cookie; every other
 * action acts on the cookie's session. A refusal of the API (a wrong code, aal2 needed) is shown
 * on the page; an ended session shows the sign-in form. Throws `forbidden` for another origin.
 */
export const securityPost = async (
  db: Db,
  request: {
    cookies: readonly string[] | undefined;
    origin: string | undefined;
    fetchSite: string | undefined;
    fields: Map<string, string>;
    client: ClientInfo;
  },
  now: Date,
): Promise<StaticAnswer> => {
  // The pages send no Referer, so a browser's form post says `Origin: null`; its Sec-Fetch-Site still
  // tells a post from the page itself (`same-origin`) from one another site made it send.
  const fromPage = request.fetchSite === 'same-origin' || request.origin === PAGE_ORIGIN;
  if (!fromPage) throw new AppError('forbidden', 'This form is sent only from the account security page itself.');
  const action = request.fields.get('action') ?? '';
  const cookie = tokenOf(request.cookies);
  try {
    if (action === 'sign-in') {
      const input = validate(SignInBody, { email: request.fields.get('email') ?? '', password: request.fields.get('password') ?? '' });
      const token = (await signIn(db, input, request.client, now)).session.access_token;
      return withHeaders(await render(db, token), setCookie(token));
    }
    if (action === 'adopt') {
      const token = request.fields.get('token') ?? '';
      const done = ADOPTED[request.fields.get('done') ?? ''] ?? ADOPTED['signed-in'];
      // A first passkey's recovery codes, which the script got from the verify: shown this once, as after a code.
      const codes = (request.fields.get('codes') ?? '').split(' ').filter((c) => RECOVERY_CODE.test(c));
      return withHeaders(
        await render(db, token, {
          message: { text: done as string, kind: 'done' },
          recoveryCodes: codes.length ? codes.slice(0, 10) : undefined,
        }),
        setCookie(token),
      );
    }
    if (!cookie) return signInPage(SIGNED_OUT);
    return await act(db, action, request.fields, cookie, now);
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    if (error.code === 'unauthorized') return withHeaders(signInPage(SIGNED_OUT), clearCookie);
    const text = [error.message, ...Object.entries(error.fields ?? {}).map(([field, problem]) => `${field}: ${problem}`)].join(' ');
    if (!cookie || action === 'sign-in' || action === 'adopt') return signInPage(text);
    return render(db, cookie, { message: { text, kind: 'error' } }).catch(() => withHeaders(signInPage(SIGNED_OUT), clearCookie));
  }
};
