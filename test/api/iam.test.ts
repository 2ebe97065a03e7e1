import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { issueToken } from '#lib/auth/account-tokens.ts';
import { hashOpaqueToken } from '#lib/auth/opaque-tokens.ts';
import { db } from '#lib/db/service.ts';
import { cursorKeyPartitionKey } from '#lib/db/entities/cursor-key.ts';
import { KEYS } from '#lib/db/entities/table.ts';
import { ROUTES } from '#lib/http/routes.ts';
import { WEBHOOK_SWEEP_ATTRIBUTES } from '#infra/webhooks.ts';
import { webhookQueue } from '#lib/events/webhooks/queue.ts';
import { sweepWebhookEvents } from '#lib/events/webhooks/sweep.ts';
import {
  DOMAIN_RECHECK,
  MAILER,
  STREAM_DISPATCH,
  TEAM_CLEANUP,
  WEBHOOK_DELIVERY,
  WEBHOOK_FANOUT,
  WEBHOOK_SWEEP,
} from '#lib/http/background.ts';
import { invocation } from '#lib/http/server.ts';
import type { UserItem } from '#lib/db/items.ts';
import { addMember, confirm, createTeam, freshEmail, signUp, useApi } from '../helpers/api.ts';
import { currentStep, totpCode } from '../helpers/mfa.ts';
import { resetThroughMailbox, throughProvider, trade } from '../helpers/oauth.ts';
import { passkeyChallenge, registerPasskey, signInWithPasskey, softAuthenticator } from '../helpers/passkeys.ts';

/**
 * Least privilege, observed (SECURITY-TESTS K1): DynamoDB Local checks no IAM, so a function that
 * uses an action its role lacks would only fail on AWS. Every request is attributed to the
 * function that sent it (the local server runs each in its own async context), mapped to the IAM
 * actions it needs, and compared with the grants of lib/http/routes.ts, which the stack applies.
 */
// Webhooks go to 127.0.0.1, where nothing listens on port 9: each attempt is refused at once, locally.
vi.hoisted(() => {
  process.env.WEBHOOKS_ALLOW_PRIVATE_URLS = 'true';
});
// A provider on loopback (oidc-provider) for the provider sign-in routes, anyone signing in there;
// set before the handlers load their settings.
const idp = await vi.hoisted(async () => {
  const { startIdp } = await import('../helpers/oidc-idp.ts');
  const { APP_URL, CALLBACK, PUBLIC_URL } = await import('../helpers/oauth.ts');
  const started = await startIdp({ redirectUri: CALLBACK, anyone: true });
  process.env.PUBLIC_URL = PUBLIC_URL;
  process.env.OAUTH_REDIRECT_URLS = APP_URL;
  process.env.OAUTH_PROVIDERS = JSON.stringify([{ id: 'google', type: 'oidc', issuer: started.issuer, clientId: started.clientId }]);
  process.env.OAUTH_CLIENT_SECRETS = JSON.stringify({ google: started.clientSecret });
  return started;
});
afterAll(() => idp.stop());
// A DNS server on loopback for the domain proofs, set before the handlers load their settings.
const dns = await vi.hoisted(async () => {
  const { startDnsServer } = await import('../helpers/dns-server.ts');
  const started = await startDnsServer();
  process.env.DNS_SERVERS = started.address;
  return started;
});
afterAll(() => dns.stop());
const HOOK = 'http://127.0.0.1:9/hook';

const api = useApi();
const used = new Map<string, Set<string>>();
/** The attribute names the webhook sweep's gsi3 Queries and UpdateItems name, and their ReturnValues. */
const sweepNames = { teamList: new Set<string>(), watermark: new Set<string>(), returnValues: new Set<string>() };
const usedIndexes = new Map<string, Set<string>>();

/** The IAM actions one request needs: a transaction is authorised item by item. */
const actionsOf = (command: string, input: Record<string, unknown>): string[] => {
  if (command === 'TransactWriteItemsCommand') {
    const kinds: Record<string, string> = {
      Put: 'PutItem',
      Update: 'UpdateItem',
      Delete: 'DeleteItem',
      ConditionCheck: 'ConditionCheckItem',
    };
    return (input.TransactItems as Record<string, unknown>[]).map((item) => kinds[Object.keys(item)[0] as string] as string);
  }
  if (command === 'TransactGetItemsCommand') return ['GetItem'];
  return [command.replace(/Command$/, '')];
};

beforeAll(() => {
  db().documents.middlewareStack.add(
    (next, context) => (args) => {
      const fn = invocation.getStore()?.functionName;
      if (fn) {
        const input = args.input as Record<string, unknown>;
        // A PutItem of the cursor key item is granted apart, on that partition only (infra/stack.ts).
        const onCursorKey = (input.Item as Record<string, unknown> | undefined)?.[KEYS.pk] === cursorKeyPartitionKey();
        for (const action of actionsOf(context.commandName as string, input)) {
          used.set(fn, (used.get(fn) ?? new Set()).add(onCursorKey ? `${action} (cursor key)` : action));
        }
        if (typeof input.IndexName === 'string') usedIndexes.set(fn, (usedIndexes.get(fn) ?? new Set()).add(input.IndexName));
        // The sweep's grants for these two name attributes (infra/webhooks.ts WEBHOOK_SWEEP_ATTRIBUTES).
        const names = Object.values((input.ExpressionAttributeNames ?? {}) as Record<string, string>);
        if (fn === WEBHOOK_SWEEP.name && context.commandName === 'QueryCommand' && input.IndexName === 'gsi3')
          for (const name of names) sweepNames.teamList.add(name);
        if (fn === WEBHOOK_SWEEP.name && context.commandName === 'UpdateItemCommand') {
          for (const name of names) sweepNames.watermark.add(name);
          sweepNames.returnValues.add(String(input.ReturnValues ?? 'NONE'));
        }
      }
      return next(args);
    },
    { step: 'initialize', name: 'recordActions' },
  );
});
afterAll(() => db().documents.middlewareStack.remove('recordActions'));

// The stream's reader, the mailer, the team cleanup and the webhook fan-out on their queues, and the
// webhook delivery on its own, as the local server runs them; their requests count too.
let stopPoller: (() => Promise<void> | void) | undefined;
beforeAll(async () => {
  const { startLocalBackground } = await import('#infra/local-background.ts');
  const background = await startLocalBackground();
  stopPoller = background.stop;
});
afterAll(() => stopPoller?.());

describe('IAM grants cover what every function does', () => {
  it('runs every route, rare paths included, within its grants', async () => {
    const owner = await signUp(api);
    const admin = await signUp(api);
    const guest = await signUp(api);
    const decliner = await signUp(api);
    const team = await createTeam(api, owner);
    const adminId = await addMember(api, team.slug, owner, admin, 'MEMBER');
    const call = (method: string, path: string, token?: string, json?: unknown) =>
      api.call(method, path, { ...(token ? { token } : {}), ...(json !== undefined ? { json } : {}) });

    await call('POST', '/api/auth/signin', undefined, { email: owner.email, password: owner.password });
    await call('POST', '/api/auth/signin', undefined, { email: freshEmail('nobody'), password: 'wrong password' });
    await call('GET', '/api/auth/user', owner.token);
    await call('PUT', '/api/auth/user', owner.token, { firstName: 'Owner' });
    await call('GET', '/api/auth/sessions', owner.token);
    await call('GET', '/.well-known/jwks.json');
    await call('GET', '/api/openapi.json');
    await call('GET', '/docs');
    await call('GET', '/docs/start.js');
    await call('GET', '/api/teams', owner.token);
    await call('GET', `/api/teams/${team.slug}`, owner.token);
    await call('PUT', `/api/teams/${team.slug}`, owner.token, { name: 'Moved', slug: `${team.slug}-m` });
    const slug = `${team.slug}-m`;
    await call('GET', `/api/teams/${slug}/members`, owner.token);
    await call('PUT', `/api/teams/${slug}/members/${adminId}`, owner.token, { role: 'OWNER' });
    await call('PUT', `/api/teams/${slug}/members/${adminId}`, owner.token, { role: 'ADMIN' });
    await call('POST', `/api/teams/${slug}/invites`, owner.token, { email: guest.email, role: 'MEMBER' });
    await call('POST', `/api/teams/${slug}/invites`, owner.token, { email: guest.email, role: 'ADMIN' });
    await call('POST', `/api/teams/${slug}/invites`, owner.token, { email: decliner.email, role: 'MEMBER' });
    await call('POST', `/api/teams/${slug}/invites`, owner.token, { email: freshEmail('revoked'), role: 'MEMBER' });
    const invites = (await call('GET', `/api/teams/${slug}/invites`, owner.token)).body.data;
    await call('GET', `/api/teams/${slug}/invites/${invites[0].id}`, owner.token);
    await call('POST', `/api/teams/${slug}/invites/${invites[1].id}/resend`, owner.token);
    await call('DELETE', `/api/teams/${slug}/invites/${invites[2].id}`, owner.token);
    const mine = (await call('GET', '/api/invites', guest.token)).body.data[0];
    await call('GET', `/api/invites/${mine.uuid}`, guest.token);
    await call('POST', `/api/invites/${mine.uuid}/accept`, guest.token);
    const theirs = (await call('GET', '/api/invites', decliner.token)).body.data[0];
    await call('POST', `/api/invites/${theirs.uuid}/decline`, decliner.token);
    await call('POST', `/api/teams/${slug}/invites/bulk`, owner.token, {
      invites: [
        { email: freshEmail('bulk'), role: 'MEMBER' },
        { email: guest.email, role: 'MEMBER' },
      ],
    });
    await call('GET', `/api/teams/${slug}/audit?action=invite.created`, owner.token);
    // Ownership: declined, withdrawn, then accepted in a team of its own (the roles swap there).
    const nominate = (teamSlug: string, memberId: number) => call('POST', `/api/teams/${teamSlug}/transfer`, owner.token, { memberId });
    await nominate(slug, adminId);
    await call('POST', `/api/teams/${slug}/transfer/decline`, admin.token);
    await nominate(slug, adminId);
    await call('DELETE', `/api/teams/${slug}/transfer`, owner.token);
    const handed = await createTeam(api, owner);
    await nominate(handed.slug, await addMember(api, handed.slug, owner, admin, 'MEMBER'));
    expect((await call('POST', `/api/teams/${handed.slug}/transfer/accept`, admin.token)).status).toBe(200);
    const hook = (await call('POST', `/api/teams/${slug}/webhooks`, owner.token, { url: HOOK, events: ['team.updated'] })).body.data;
    await call('GET', `/api/teams/${slug}/webhooks`, owner.token);
    await call('DELETE', `/api/teams/${slug}/webhooks/${hook.id}`, owner.token);
    // A webhook event: fanned out from the stream, an attempt logged (refused: a failure reads and
    // writes what a success does), then the log and a replay.
    const watched = (await call('POST', `/api/teams/${slug}/webhooks`, owner.token, { url: HOOK, events: ['invite.created'] })).body.data;
    await call('POST', `/api/teams/${slug}/invites`, owner.token, { email: freshEmail('watched'), role: 'MEMBER' });
    let attempts: { id: string }[] = [];
    for (let i = 0; i < 300 && attempts.length === 0; i++) {
      attempts = (await call('GET', `/api/teams/${slug}/webhooks/${watched.id}/deliveries`, owner.token)).body.data;
      if (attempts.length === 0) await new Promise((r) => setTimeout(r, 100));
    }
    expect(attempts.length, 'no webhook delivery was attempted').toBeGreaterThan(0);
    const replayed = await call('POST', `/api/teams/${slug}/webhooks/${watched.id}/deliveries/${attempts[0]?.id}/replay`, owner.token);
    expect(replayed.status).toBe(200);
    // The webhook sweep two hours on, with the invitation's receipt gone as if the stream had lost
    // it: it reads the team list, the log and the receipts, sends the entry again and moves the watermark.
    const { data: invited } = await db().entities.auditEntry.query.byAction({ teamId: team.id, action: 'invite.created' }).go();
    for (const { entryId } of invited) await db().entities.webhookFanout.delete({ teamId: team.id, entryId }).go();
    const swept = await invocation.run({ functionName: WEBHOOK_SWEEP.name }, () =>
      sweepWebhookEvents(db(), webhookQueue, new Date(Date.now() + 2 * 3_600_000), () => true),
    );
    expect(swept.messages).toBeGreaterThan(0);
    await call('DELETE', `/api/teams/${slug}/members/${adminId}`, owner.token);

    // Refresh, then the reuse path that ends the session.
    const rotated = (await call('POST', '/api/auth/refresh', undefined, { refresh_token: guest.refreshToken })).body.data.session;
    await db()
      .entities.refreshToken.patch({ tokenHash: hashOpaqueToken(guest.refreshToken) })
      .set({ rotatedAt: 0 })
      .go();
    expect((await call('POST', '/api/auth/refresh', undefined, { refresh_token: guest.refreshToken })).status).toBe(401);
    expect((await call('GET', '/api/auth/user', rotated.access_token)).status).toBe(401);

    // Password change (ends other sessions), session revoke, sign-outs, team deletion.
    const second = (await call('POST', '/api/auth/signin', undefined, { email: owner.email, password: owner.password })).body.data.session;
    const third = (await call('POST', '/api/auth/signin', undefined, { email: owner.email, password: owner.password })).body.data.session;
    const sessions = (await call('GET', '/api/auth/sessions', third.access_token)).body.data;
    await call('DELETE', `/api/auth/sessions/${sessions.find((s: { current: boolean }) => !s.current).id}`, third.access_token);
    await call('PUT', '/api/auth/user', third.access_token, { password: 'a renewed passphrase', currentPassword: owner.password });
    await call('DELETE', `/api/teams/${slug}`, third.access_token);
    await call('POST', '/api/auth/signout?scope=global', third.access_token);
    await call('POST', '/api/auth/signout', decliner.token);
    expect((await call('GET', '/api/auth/user', second.access_token)).status).toBe(401);

    // Account mail (issue 12). Tokens are made as the mailer makes them (issueToken), for the user's current epoch.
    const userNow = async (userUuid: string) => (await db().entities.user.get({ userUuid }).go({ consistent: true })).data as UserItem;
    const fresh = await signUp(api, 'fresh', { confirmed: false });
    expect((await call('POST', '/api/auth/verify/resend', fresh.token)).status).toBe(200);
    const verification = await issueToken(
      db(),
      { purpose: 'verification', email: fresh.email, user: await userNow(fresh.uuid) },
      new Date(),
    );
    expect((await call('POST', '/api/auth/verify', undefined, { token: verification })).status).toBe(200);
    // An e-mail change: pending until the new address's token is used (tokenEpoch bumped, claims moved).
    const changer = await signUp(api, 'changer');
    const newAddress = freshEmail('changed');
    const pending = await call('PUT', '/api/auth/user', changer.token, { email: newAddress, currentPassword: changer.password });
    expect(pending.body.data.new_email).toBe(newAddress);
    const change = await issueToken(db(), { purpose: 'email_change', email: newAddress, user: await userNow(changer.uuid) }, new Date());
    expect((await call('POST', '/api/auth/verify', undefined, { token: change })).body.data.email).toBe(newAddress);
    // Recovery asks the same of a known and an unknown address; a reset uses a recovery token, a bad token is 410.
    expect((await call('POST', '/api/auth/recover', undefined, { email: fresh.email })).status).toBe(200);
    expect((await call('POST', '/api/auth/recover', undefined, { email: freshEmail('unknown') })).status).toBe(200);
    const recovery = await issueToken(db(), { purpose: 'recovery', email: fresh.email, user: await userNow(fresh.uuid) }, new Date());
    expect((await call('POST', '/api/auth/reset', undefined, { token: recovery, password: 'a passphrase after reset' })).status).toBe(200);
    expect((await call('POST', '/api/auth/reset', undefined, { token: recovery, password: 'a passphrase after reset' })).status).toBe(410);

    // The Supabase-compatible routes (lib/gotrue/): every grant of theirs, with GoTrue's bodies.
    const gotrueEmail = freshEmail('gotrue');
    const gotrue = (await call('POST', '/auth/v1/signup', undefined, { email: gotrueEmail, password: 'correct horse battery staple' }))
      .body;
    expect(gotrue.access_token).toEqual(expect.any(String));
    const gotrueUser = await userNow(gotrue.user.id);
    const signedIn = (
      await call('POST', '/auth/v1/token?grant_type=password', undefined, { email: gotrueEmail, password: 'correct horse battery staple' })
    ).body;
    await call('POST', '/auth/v1/token?grant_type=refresh_token', undefined, { refresh_token: signedIn.refresh_token });
    await call('GET', '/auth/v1/user', gotrue.access_token);
    await call('PUT', '/auth/v1/user', gotrue.access_token, { data: { firstName: 'Go', plan: 'free' } });
    await call('PUT', '/auth/v1/user', gotrue.access_token, { password: 'a passphrase of gotrue' });
    await call('POST', '/auth/v1/resend', undefined, { type: 'signup', email: gotrueEmail });
    await call('POST', '/auth/v1/recover', undefined, { email: gotrueEmail });
    const confirmation = await issueToken(
      db(),
      { purpose: 'verification', email: gotrueEmail, user: await userNow(gotrueUser.userUuid) },
      new Date(),
    );
    expect((await call('POST', '/auth/v1/verify', undefined, { type: 'signup', token_hash: confirmation })).status).toBe(200);
    const reset = await issueToken(db(), { purpose: 'recovery', email: gotrueEmail, user: await userNow(gotrueUser.userUuid) }, new Date());
    expect((await call('POST', '/auth/v1/verify', undefined, { type: 'recovery', token_hash: reset })).status).toBe(200);
    await call('POST', '/auth/v1/logout?scope=others', gotrue.access_token);
    await call('POST', '/auth/v1/logout', gotrue.access_token);
    await call('GET', '/auth/v1/.well-known/jwks.json');
    await call('GET', '/auth/v1/settings');

    // Second factors (docs/mfa.md): activation ends the other sessions and makes recovery codes; a
    // recovery code mails a notice; removing the last verified factor takes the codes and ends the other sessions.
    const mfa = await signUp(api, 'mfa');
    const other = (await call('POST', '/api/auth/signin', undefined, { email: mfa.email, password: mfa.password })).body.data.session;
    const totp = (await call('POST', '/api/auth/factors', mfa.token, { factor_type: 'totp' })).body.data;
    await call('GET', '/api/auth/factors', mfa.token);
    await call('PUT', `/api/auth/factors/${totp.id}`, mfa.token, { friendly_name: 'Phone' });
    const step = currentStep();
    const challenged = (await call('POST', `/api/auth/factors/${totp.id}/challenge`, mfa.token)).body.data;
    const stepped = await call('POST', `/api/auth/factors/${totp.id}/verify`, mfa.token, {
      challenge_id: challenged.id,
      code: totpCode(totp.totp.secret, step),
    });
    expect(stepped.status).toBe(200);
    expect((await call('GET', '/api/auth/user', other.access_token)).status).toBe(401);
    const aal1 = (await call('POST', '/api/auth/signin', undefined, { email: mfa.email, password: mfa.password })).body.data.session;
    const codes: string[] = stepped.body.data.recovery_codes;
    expect((await call('POST', '/api/auth/recovery-codes/verify', aal1.access_token, { code: codes[0] })).status).toBe(200);
    const aal2 = stepped.body.data.session.access_token;
    expect((await call('POST', '/api/auth/recovery-codes', aal2)).status).toBe(201);
    const gotrueFactor = (await call('POST', '/auth/v1/factors', aal2, { factor_type: 'totp' })).body;
    const gotrueChallenge = (await call('POST', `/auth/v1/factors/${gotrueFactor.id}/challenge`, aal2, { factorId: gotrueFactor.id })).body;
    const gotrueVerified = await call('POST', `/auth/v1/factors/${gotrueFactor.id}/verify`, aal2, {
      challenge_id: gotrueChallenge.id,
      code: totpCode(gotrueFactor.totp.secret),
    });
    expect(gotrueVerified.status).toBe(200);
    // The team policy is the team update's own write (set while this session is still aal2: removing the last factor takes it back to aal1).
    const ruled = await createTeam(api, mfa);
    const policy = await call('PUT', `/api/teams/${ruled.slug}`, aal2, { name: 'Ruled', slug: ruled.slug, requireMfa: true });
    expect(policy.status).toBe(200);
    expect((await call('DELETE', `/auth/v1/factors/${gotrueFactor.id}`, aal2)).status).toBe(200);
    expect((await call('DELETE', `/api/auth/factors/${totp.id}`, aal2)).status).toBe(200);

    // Passkeys: registration writes the credential item; a step-up and a sign-in with it alone move
    // its counter; removing it, and deleting an account that has one, delete the credential item.
    const passkeyUser = await signUp(api, 'passkey');
    const authenticator = await softAuthenticator();
    const passkey = await registerPasskey(api, passkeyUser.token, authenticator);
    const passwordSession = (
      await call('POST', '/api/auth/signin', undefined, { email: passkeyUser.email, password: passkeyUser.password })
    ).body.data.session.access_token;
    const request = await passkeyChallenge(api, passwordSession, passkey.factorId);
    const proven = await call('POST', `/api/auth/factors/${passkey.factorId}/verify`, passwordSession, {
      challenge_id: request.challengeId,
      webauthn: { type: 'request', credential_response: authenticator.get(request.publicKey) },
    });
    expect(proven.status).toBe(200);
    const byPasskey = await signInWithPasskey(api, authenticator);
    expect(byPasskey.status).toBe(200);
    const passkeySession = byPasskey.body.data.session.access_token;
    expect((await call('DELETE', `/api/auth/factors/${passkey.factorId}`, passkeySession)).status).toBe(200);
    // The last factor gone, that session is aal1 and the account has none: another passkey from it.
    const again = await registerPasskey(api, passkeySession, authenticator);
    const leaving = again.verified.body.data.session.access_token;
    // The account security page: its GET reads the cookie's session; its forms run the same use cases.
    const form = async (fields: Record<string, string>, cookie = '') => {
      const res = await api.call('POST', '/account/security', {
        raw: new URLSearchParams(fields).toString(),
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin', ...(cookie ? { cookie } : {}) },
      });
      expect(res.status).toBe(200);
      return { page: String(res.body), cookie: res.headers.get('set-cookie')?.split(';')[0] ?? cookie };
    };
    const pageUser = await signUp(api, 'security-page');
    const { cookie } = await form({ action: 'sign-in', email: pageUser.email, password: pageUser.password });
    expect((await api.call('GET', '/account/security', { headers: { cookie } })).status).toBe(200);
    const enrolment = await form({ action: 'enrol-totp' }, cookie);
    const pageSecret = /id="totp-secret">([A-Z2-7]+)</.exec(enrolment.page)?.[1] as string;
    const pageFactor = /name="factor" value="([0-9a-f-]{36})"/.exec(enrolment.page)?.[1] as string;
    const active = await form({ action: 'activate-totp', factor: pageFactor, 'activation-code': totpCode(pageSecret) }, cookie);
    await form({ action: 'regenerate-codes' }, active.cookie);
    await form({ action: 'remove-factor', factor: pageFactor }, active.cookie);
    await form({ action: 'sign-out' }, active.cookie);
    expect((await call('DELETE', '/api/auth/user', leaving, { currentPassword: passkeyUser.password })).status).toBe(200);

    // Provider sign-in (docs/sso.md): a new account, the same identity again, a link to a confirmed
    // account (and its notice), a refusal for an unconfirmed one (its notice); codes traded in both
    // dialects; a link started by a signed-in owner; identities listed and unlinked in both dialects;
    // an account with an identity deleted (its claim with it).
    const viaGoogle = async (subject: string, options: { gotrue?: boolean; token?: string; linkPath?: string } = {}) =>
      throughProvider(api, 'google', (url) => idp.signIn(url, subject), options);
    const newcomer = await viaGoogle(freshEmail('oauth-new'));
    const oauthSession = (await trade(api, newcomer.query.code as string, newcomer.verifier)).body.data.session;
    const returning = await viaGoogle(oauthSession.user.email, { gotrue: true });
    const pkceGrant = { auth_code: returning.query.code, code_verifier: returning.verifier };
    expect((await call('POST', '/auth/v1/token?grant_type=pkce', undefined, pkceGrant)).status).toBe(200);
    const linkedOwner = await signUp(api, 'oauth-linked');
    await resetThroughMailbox(api, linkedOwner, linkedOwner.password);
    const linked = await viaGoogle(linkedOwner.email);
    const linkedSession = await trade(api, linked.query.code as string, linked.verifier);
    expect(linkedSession.status).toBe(200);
    // The reset ended the sign-up's session: the provider's is the owner's now.
    linkedOwner.token = linkedSession.body.data.session.access_token;
    const squatter = await signUp(api, 'oauth-squatter', { confirmed: false });
    expect((await viaGoogle(squatter.email)).query.error_code).toBe('email_exists');
    await call('GET', '/api/auth/identities', linkedOwner.token);
    const seedLink = await viaGoogle(freshEmail('oauth-work'), { token: linkedOwner.token, linkPath: '/api/auth/identities' });
    expect((await trade(api, seedLink.query.code as string, seedLink.verifier)).status).toBe(200);
    const gotrueLink = await viaGoogle(freshEmail('oauth-work2'), {
      token: linkedOwner.token,
      linkPath: '/auth/v1/user/identities/authorize',
    });
    expect((await trade(api, gotrueLink.query.code as string, gotrueLink.verifier)).status).toBe(200);
    const ways = (await call('GET', '/api/auth/identities', linkedOwner.token)).body.data as { identity_id: string; provider: string }[];
    const [, workIdentity, otherWork] = ways;
    expect((await call('DELETE', `/api/auth/identities/${workIdentity?.identity_id}`, linkedOwner.token)).status).toBe(200);
    expect((await call('DELETE', `/auth/v1/user/identities/${otherWork?.identity_id}`, linkedOwner.token)).status).toBe(200);
    expect((await call('GET', '/auth/v1/callback?state=unknown')).status).toBe(410);
    expect((await call('DELETE', '/api/auth/user', linkedOwner.token, { currentPassword: linkedOwner.password })).status).toBe(200);

    // Team domains (docs/domains.md): claims, proofs, the setting, joining as a member and by request,
    // answers, removal (a pending and a verified domain), the scheduled re-check lapsing one, and a
    // deleted team's cleanup taking a verified domain and a request.
    const personAt = async (domain: string, name: string) => {
      const email = `${name}-${Date.now().toString(36)}@${domain}`;
      const made = (
        await call('POST', '/api/auth/signup', undefined, { email, password: 'a domain passphrase', firstName: name, lastName: 'X' })
      ).body.data.session;
      const person = { email, uuid: made.user.id as string, token: made.access_token as string };
      await confirm(api, person);
      return person;
    };
    const domainOwner = await signUp(api, 'domains');
    const domainTeam = await createTeam(api, domainOwner);
    const claimVerified = async (teamSlug: string, token: string, join: string) => {
      const domain = `iam-${Date.now().toString(36)}-${join}.test`;
      const claimed = (await call('POST', `/api/teams/${teamSlug}/domains`, token, { domain, join })).body.data;
      dns.records.set(claimed.verification.name, [[claimed.verification.value]]);
      expect((await call('POST', `/api/teams/${teamSlug}/domains/${domain}/verify`, token)).status).toBe(200);
      return { domain, record: claimed.verification.name as string };
    };
    const joinDomain = await claimVerified(domainTeam.slug, domainOwner.token, 'member');
    await call('GET', `/api/teams/${domainTeam.slug}/domains`, domainOwner.token);
    const joiner = await personAt(joinDomain.domain, 'joiner');
    await call('GET', '/api/joinable-teams', joiner.token);
    expect((await call('POST', `/api/teams/${domainTeam.slug}/join`, joiner.token)).body.data).toEqual({ status: 'MEMBER' });
    await call('PUT', `/api/teams/${domainTeam.slug}/domains/${joinDomain.domain}`, domainOwner.token, { join: 'request' });
    const askers = [await personAt(joinDomain.domain, 'asker'), await personAt(joinDomain.domain, 'other')];
    for (const who of askers) expect((await call('POST', `/api/teams/${domainTeam.slug}/join`, who.token)).status).toBe(200);
    const asked = (await call('GET', `/api/teams/${domainTeam.slug}/join-requests`, domainOwner.token)).body.data as { userId: number }[];
    expect((await call('POST', `/api/teams/${domainTeam.slug}/join-requests/${asked[0]?.userId}`, domainOwner.token)).status).toBe(200);
    expect((await call('DELETE', `/api/teams/${domainTeam.slug}/join-requests/${asked[1]?.userId}`, domainOwner.token)).status).toBe(200);
    const pendingDomain = `iam-${Date.now().toString(36)}-pending.test`;
    await call('POST', `/api/teams/${domainTeam.slug}/domains`, domainOwner.token, { domain: pendingDomain });
    expect((await call('POST', `/api/teams/${domainTeam.slug}/domains/${pendingDomain}/verify`, domainOwner.token)).status).toBe(422);
    expect((await call('DELETE', `/api/teams/${domainTeam.slug}/domains/${pendingDomain}`, domainOwner.token)).status).toBe(200);
    const dropped = await claimVerified(domainTeam.slug, domainOwner.token, 'off');
    expect((await call('DELETE', `/api/teams/${domainTeam.slug}/domains/${dropped.domain}`, domainOwner.token)).status).toBe(200);
    // The re-check, a day later: one proof still there (moved on), one gone (lapsed).
    const lapsing = await claimVerified(domainTeam.slug, domainOwner.token, 'member');
    dns.records.delete(lapsing.record);
    const { recheckDomains } = await import('#lib/teams/domains/recheck.ts');
    const rechecked = await invocation.run({ functionName: DOMAIN_RECHECK.name }, () =>
      recheckDomains(db(), new Date(Date.now() + 25 * 3_600_000), () => true),
    );
    expect(rechecked.lapsed).toBeGreaterThanOrEqual(1);
    expect(rechecked.confirmed).toBeGreaterThanOrEqual(1);
    // A deleted team with a verified domain and a request waiting: the cleanup takes them.
    const leavingOwner = await signUp(api, 'domains-leaving');
    const leavingTeam = await createTeam(api, leavingOwner);
    const leavingDomain = await claimVerified(leavingTeam.slug, leavingOwner.token, 'request');
    await call('POST', `/api/teams/${leavingTeam.slug}/join`, (await personAt(leavingDomain.domain, 'late')).token);
    expect((await call('DELETE', `/api/teams/${leavingTeam.slug}`, leavingOwner.token)).status).toBe(200);

    // An invitation link: its page reads the invite and token, then team and inviter; sign-up with its token confirms the address.
    const keeper = await signUp(api, 'keeper');
    const coOwner = await signUp(api, 'coowner');
    const kept = await createTeam(api, keeper);
    await addMember(api, kept.slug, keeper, coOwner, 'OWNER');
    const inviteeEmail = freshEmail('invitee');
    expect((await call('POST', `/api/teams/${kept.slug}/invites`, keeper.token, { email: inviteeEmail, role: 'MEMBER' })).status).toBe(201);
    const invite = (await call('GET', `/api/teams/${kept.slug}/invites`, keeper.token)).body.data.find(
      (i: { email: string }) => i.email === inviteeEmail,
    );
    const invitation = await issueToken(
      db(),
      { purpose: 'invitation', email: inviteeEmail, inviteUuid: invite.uuid, expiresAt: invite.expiresAt },
      new Date(),
    );
    const page = await call('GET', `/invites/${invite.uuid}?token=${invitation}`);
    expect(page.status).toBe(200);
    expect(page.body).toContain(`Join Team ${kept.slug}`);
    await call('GET', `/verify?token=${verification}`);
    await call('GET', `/reset?token=${recovery}`);
    await call('GET', '/assets/page.css');
    // The "no more" link of invitations: its page, then the one-click POST (a block and the team's audit entry).
    const stop = await issueToken(db(), { purpose: 'unsubscribe', email: freshEmail('unwilling'), teamId: kept.id }, new Date());
    expect((await call('GET', `/unsubscribe?token=${stop}`)).status).toBe(200);
    const oneClick = await api.call('POST', `/unsubscribe?token=${stop}`, {
      raw: 'List-Unsubscribe=One-Click',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(String(oneClick.body)).toContain('gets no more invitations');
    const invitee = await call('POST', '/api/auth/signup', undefined, {
      email: inviteeEmail,
      password: 'an invited passphrase',
      firstName: 'In',
      lastName: 'Vitee',
      inviteToken: invitation,
    });
    expect(invitee.body.data.session.user.email_confirmed_at).toEqual(expect.any(String));

    // Deletion: a co-owner leaves (its membership and the team's ownerCount in one transaction); the owner left is sole: 409.
    expect((await call('DELETE', '/api/auth/user', coOwner.token, { currentPassword: coOwner.password })).status).toBe(200);
    expect((await call('GET', '/api/auth/user', coOwner.token)).status).toBe(401);
    const sole = await call('DELETE', '/api/auth/user', keeper.token, { currentPassword: keeper.password });
    expect(sole.status).toBe(409);
    expect(sole.body.error.fields.teams).toBe(kept.slug);
    // Lists paged one item at a time: the first makes the cursor key item, the next reads it (or the cache).
    // Every list is granted the same (infra/stack.ts, test/infra/stack.test.ts); two keep this test short.
    const pageThrough = async (path: string, token: string) => {
      for (let next: string | undefined = `${path}?limit=1`, n = 0; next && n < 3; n++) {
        const res = await api.call('GET', next, { token });
        expect(res.status).toBe(200);
        next = /<([^>]+)>; rel="next"/.exec(res.headers.get('link') ?? '')?.[1]?.replace(/^https?:\/\/[^/]+/, '');
      }
    };
    await createTeam(api, keeper);
    for (const address of [freshEmail('paged'), freshEmail('paged')])
      await call('POST', `/api/teams/${kept.slug}/invites`, keeper.token, { email: address, role: 'MEMBER' });
    await pageThrough(`/api/teams/${kept.slug}/invites`, keeper.token);
    await pageThrough('/api/teams', keeper.token);
    expect(used.get('invites-list')?.has('PutItem (cursor key)')).toBe(true);

    // Accept checks, in its transaction, that the accepting account still exists.
    expect(used.get('invites-accept')?.has('ConditionCheckItem')).toBe(true);

    const missing: string[] = [];
    for (const route of ROUTES) {
      // The JWKS is answered from the key cache the earlier requests warmed: it may send nothing.
      // A route granted nothing (the documentation) must send nothing: `missing` catches any request.
      // The key sets read the keys item only on a cold start, which this process is past.
      if (!['jwks', 'gotrue-jwks'].includes(route.name) && route.actions.length > 0)
        expect(used.has(route.name), `${route.name} was not exercised`).toBe(true);
      const granted: readonly string[] = [...route.actions, ...('pages' in route && route.pages ? ['PutItem (cursor key)'] : [])];
      for (const action of used.get(route.name) ?? []) {
        if (!granted.includes(action)) missing.push(`${route.name}: ${action}`);
      }
      for (const index of usedIndexes.get(route.name) ?? []) {
        if (!(route.indexes as readonly string[]).includes(index)) missing.push(`${route.name}: index ${index}`);
      }
    }
    // The mailer has sent the scenario's invitations and decline notice by now (poll, bounded).
    for (let i = 0; i < 100 && !used.get(MAILER.name)?.has('UpdateItem'); i++) await new Promise((r) => setTimeout(r, 100));
    expect(used.has(MAILER.name), 'the mailer was not exercised').toBe(true);
    for (const action of used.get(MAILER.name) ?? []) {
      if (!(MAILER.actions as readonly string[]).includes(action)) missing.push(`${MAILER.name}: ${action}`);
    }
    // The stream's reader only queues: no table access at all.
    expect([...(used.get(STREAM_DISPATCH.name) ?? [])]).toEqual([]);
    // The deleted team's cleanup has run to its end (it deletes its job last).
    for (let i = 0; i < 100 && !used.get(TEAM_CLEANUP.name)?.has('DeleteItem'); i++) await new Promise((r) => setTimeout(r, 100));
    expect(used.has(TEAM_CLEANUP.name), 'the team cleanup was not exercised').toBe(true);
    for (const action of used.get(TEAM_CLEANUP.name) ?? []) {
      if (!(TEAM_CLEANUP.actions as readonly string[]).includes(action)) missing.push(`${TEAM_CLEANUP.name}: ${action}`);
    }
    for (const index of usedIndexes.get(TEAM_CLEANUP.name) ?? []) {
      if (!(TEAM_CLEANUP.indexes as readonly string[]).includes(index)) missing.push(`${TEAM_CLEANUP.name}: index ${index}`);
    }
    for (const fn of [WEBHOOK_FANOUT, WEBHOOK_DELIVERY, DOMAIN_RECHECK]) {
      expect(used.has(fn.name), `${fn.name} was not exercised`).toBe(true);
      for (const action of used.get(fn.name) ?? [])
        if (!(fn.actions as readonly string[]).includes(action)) missing.push(`${fn.name}: ${action}`);
      const indexes: readonly string[] = 'indexes' in fn ? fn.indexes : [];
      for (const index of usedIndexes.get(fn.name) ?? []) if (!indexes.includes(index)) missing.push(`${fn.name}: index ${index}`);
    }
    for (const action of used.get(WEBHOOK_SWEEP.name) ?? [])
      if (!(WEBHOOK_SWEEP.actions as readonly string[]).includes(action)) missing.push(`${WEBHOOK_SWEEP.name}: ${action}`);
    for (const index of usedIndexes.get(WEBHOOK_SWEEP.name) ?? [])
      if (!(WEBHOOK_SWEEP.indexes as readonly string[]).includes(index)) missing.push(`${WEBHOOK_SWEEP.name}: index ${index}`);
    expect([...(used.get(WEBHOOK_SWEEP.name) ?? [])].sort()).toEqual(['BatchGetItem', 'BatchWriteItem', 'GetItem', 'Query', 'UpdateItem']);
    // Within the attribute conditions of its gsi3 Query and its UpdateItem, and nothing read back.
    for (const name of sweepNames.teamList)
      if (!(WEBHOOK_SWEEP_ATTRIBUTES.teamList as readonly string[]).includes(name))
        missing.push(`${WEBHOOK_SWEEP.name}: gsi3 attribute ${name}`);
    for (const name of sweepNames.watermark)
      if (!(WEBHOOK_SWEEP_ATTRIBUTES.watermark as readonly string[]).includes(name))
        missing.push(`${WEBHOOK_SWEEP.name}: updated attribute ${name}`);
    expect(sweepNames.teamList.size).toBeGreaterThan(0);
    expect(sweepNames.watermark.size).toBeGreaterThan(0);
    expect([...sweepNames.returnValues]).toEqual(['NONE']);
    // Thrown whole: an assertion's diff would cut the list short.
    if (missing.length > 0) throw new Error(`used but not granted: ${missing.join(', ')}`);
    // Every route in one scenario, password hashing included: longer than the default on a busy machine.
  }, 150_000);
});
