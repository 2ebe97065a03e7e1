/**
 * Team domains (docs/domains.md) against a DNS server on loopback (test/helpers/dns-server.ts, as
 * DNS_SERVERS): claiming, the TXT proof, one domain for one team, joining through a confirmed
 * address (as MEMBER or by request), the scheduled re-check and a lapsed proof, the team's deletion.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { type TestUser, addMember, confirm, createTeam, signUp, useApi } from '../helpers/api.ts';
import { startDnsServer } from '../helpers/dns-server.ts';
import { challengeAndVerify, enrolTotp, totpCode } from '../helpers/mfa.ts';

const dns = await startDnsServer();
process.env.DNS_SERVERS = dns.address;
afterAll(() => dns.stop());

const api = useApi();
const db = async () => (await import('#lib/db/service.ts')).db();

let n = 0;
const freshDomain = (name = 'acme') => `${name}-${Date.now().toString(36)}-${++n}.test`;

/** A confirmed (by default) account at `domain`. */
const personAt = async (domain: string, name = 'person', confirmed = true): Promise<TestUser> => {
  const email = `${name}-${++n}@${domain}`;
  const password = 'correct horse battery staple';
  const res = await api.call('POST', '/api/auth/signup', { json: { email, password, firstName: name, lastName: 'Tester' } });
  expect(res.status).toBe(201);
  const session = res.body.data.session;
  const user = { email, password, token: session.access_token, refreshToken: session.refresh_token, uuid: session.user.id };
  if (confirmed) await confirm(api, user);
  return user;
};

const claim = (owner: TestUser, slug: string, domain: string, join?: string) =>
  api.call('POST', `/api/teams/${slug}/domains`, { token: owner.token, json: { domain, ...(join ? { join } : {}) } });
const verify = (owner: TestUser, slug: string, domain: string) =>
  api.call('POST', `/api/teams/${slug}/domains/${domain}/verify`, { token: owner.token });
/** Publishes the TXT record a claim names. */
const publish = (verification: { name: string; value: string }, extra: string[][] = []) =>
  dns.records.set(verification.name, [...extra, [verification.value]]);

/** A team with a verified domain: its owner, slug and domain. */
const verifiedTeam = async (join = 'member') => {
  const owner = await signUp(api, 'owner');
  const team = await createTeam(api, owner);
  const domain = freshDomain();
  const claimed = await claim(owner, team.slug, domain, join);
  expect(claimed.status).toBe(201);
  publish(claimed.body.data.verification);
  expect((await verify(owner, team.slug, domain)).status).toBe(200);
  return { owner, team, domain, verification: claimed.body.data.verification };
};

describe('claiming and proving a domain', () => {
  it('claims a domain (PENDING, the TXT record to publish), refuses the proof until it is there, then verifies', async () => {
    const owner = await signUp(api, 'owner');
    const team = await createTeam(api, owner);
    const domain = freshDomain();
    const claimed = await claim(owner, team.slug, `  ${domain.toUpperCase()} `);
    expect(claimed.status).toBe(201);
    expect(claimed.body.data).toMatchObject({ domain, status: 'PENDING', join: 'request', verifiedAt: null, problem: null });
    const { verification } = claimed.body.data;
    expect(verification).toEqual({
      type: 'TXT',
      name: `_roster-challenge.${domain}`,
      value: expect.stringMatching(/^roster-domain-verification=[\w-]{32}$/),
    });

    const missing = await verify(owner, team.slug, domain);
    expect(missing.status).toBe(422);
    expect(missing.body.error).toMatchObject({
      code: 'domain_not_verified',
      message: expect.stringContaining(`no TXT record at _roster-challenge.${domain}`),
    });
    dns.records.set(verification.name, [['roster-domain-verification=someone-elses']]);
    expect((await verify(owner, team.slug, domain)).body.error.message).toContain('do not include');
    const listed = await api.call('GET', `/api/teams/${team.slug}/domains`, { token: owner.token });
    expect(listed.body.data[0].problem).toContain('do not include');

    // Other TXT records beside it, and the value split in two strings (a TXT record's strings are one value).
    const [head, tail] = [verification.value.slice(0, 20), verification.value.slice(20)];
    dns.records.set(verification.name, [['v=spf1 -all'], [head, tail]]);
    const proven = await verify(owner, team.slug, domain);
    expect(proven.status).toBe(200);
    expect(proven.body.data).toMatchObject({ status: 'VERIFIED', verifiedAt: expect.any(String), problem: null });
    // Verifying again only refreshes it.
    expect((await verify(owner, team.slug, domain)).body.data.status).toBe('VERIFIED');
    const audit = await api.call('GET', `/api/teams/${team.slug}/audit`, { token: owner.token });
    expect(audit.body.data.map((e: { action: string }) => e.action)).toEqual(expect.arrayContaining(['domain.added', 'domain.verified']));
    expect(audit.body.data.filter((e: { action: string }) => e.action === 'domain.verified')).toHaveLength(1);
  });

  it('verifies one domain for one team: a second team is domain_taken until the first lets it go', async () => {
    const first = await verifiedTeam();
    const rival = await signUp(api, 'rival');
    const rivalTeam = await createTeam(api, rival);
    // A claim costs nothing and proves nothing: anyone may claim any domain.
    const claimed = await claim(rival, rivalTeam.slug, first.domain);
    expect(claimed.status).toBe(201);
    dns.records.set(claimed.body.data.verification.name, [[first.verification.value], [claimed.body.data.verification.value]]);
    const taken = await verify(rival, rivalTeam.slug, first.domain);
    expect(taken.status).toBe(409);
    expect(taken.body.error.code).toBe('domain_taken');
    expect((await api.call('DELETE', `/api/teams/${first.team.slug}/domains/${first.domain}`, { token: first.owner.token })).status).toBe(
      200,
    );
    expect((await verify(rival, rivalTeam.slug, first.domain)).status).toBe(200);
  });

  it('answers a DNS failure as not verified, saying the lookup failed', async () => {
    const owner = await signUp(api, 'owner');
    const team = await createTeam(api, owner);
    const domain = freshDomain();
    const { verification } = (await claim(owner, team.slug, domain)).body.data;
    dns.failing.add(verification.name);
    const res = await verify(owner, team.slug, domain);
    expect(res.status).toBe(422);
    expect(res.body.error.message).toMatch(/lookup .* failed/);
    // A server that never answers: the lookup gives up (its own timeout, or the deadline inside the function's 10 s).
    dns.failing.delete(verification.name);
    dns.silent.add(verification.name);
    const hung = await verify(owner, team.slug, domain);
    expect(hung.status).toBe(422);
    expect(hung.body.error.message).toContain('failed (ETIMEOUT)');
  });

  it('leaves domains to owners: admins and members may not claim, verify, change or remove; members may not list', async () => {
    const { owner, team, domain } = await verifiedTeam();
    const admin = await signUp(api, 'admin');
    const member = await signUp(api, 'member');
    await addMember(api, team.slug, owner, admin, 'ADMIN');
    await addMember(api, team.slug, owner, member, 'MEMBER');
    expect((await claim(admin, team.slug, freshDomain())).status).toBe(403);
    expect((await verify(admin, team.slug, domain)).status).toBe(403);
    expect((await api.call('PUT', `/api/teams/${team.slug}/domains/${domain}`, { token: admin.token, json: { join: 'off' } })).status).toBe(
      403,
    );
    expect((await api.call('DELETE', `/api/teams/${team.slug}/domains/${domain}`, { token: admin.token })).status).toBe(403);
    expect((await api.call('GET', `/api/teams/${team.slug}/domains`, { token: admin.token })).status).toBe(200);
    expect((await api.call('GET', `/api/teams/${team.slug}/domains`, { token: member.token })).status).toBe(403);
    // Another team's owner, and a domain the team never claimed: 404.
    const stranger = await signUp(api, 'stranger');
    expect((await api.call('GET', `/api/teams/${team.slug}/domains`, { token: stranger.token })).status).toBe(404);
    expect((await claim(stranger, team.slug, freshDomain())).status).toBe(404);
    expect((await verify(owner, team.slug, freshDomain())).status).toBe(404);
    expect(
      (await api.call('PUT', `/api/teams/${team.slug}/domains/${freshDomain()}`, { token: owner.token, json: { join: 'off' } })).status,
    ).toBe(404);
    expect((await api.call('DELETE', `/api/teams/${team.slug}/domains/${freshDomain()}`, { token: owner.token })).status).toBe(404);
    expect((await api.call('GET', `/api/teams/${team.slug}/domains/NOT_A_DOMAIN/verify`, { token: owner.token })).status).toBe(405);
    expect((await api.call('POST', `/api/teams/${team.slug}/domains/not_a_domain/verify`, { token: owner.token })).status).toBe(404);
  });

  it('refuses names that are not domains, a domain claimed twice, and an eleventh domain', async () => {
    const owner = await signUp(api, 'owner');
    const team = await createTeam(api, owner);
    // 236 characters and more: the record name (18 more) would pass DNS's 253.
    const long = `${'a'.repeat(59)}.${'b'.repeat(59)}.${'c'.repeat(59)}.${'d'.repeat(51)}.test`;
    expect(long).toHaveLength(236);
    for (const bad of [
      'localhost',
      'a..b.test',
      'exa mple.test',
      'bücher.test',
      '-lead.test',
      `${'x'.repeat(64)}.test`,
      'acme.test.',
      long,
    ]) {
      const res = await claim(owner, team.slug, bad);
      expect(res.status, bad).toBe(422);
      expect(res.body.error.fields.domain, bad).toBeDefined();
    }
    const domain = freshDomain();
    expect((await claim(owner, team.slug, domain)).status).toBe(201);
    const twice = await claim(owner, team.slug, domain);
    expect(twice.status).toBe(409);
    for (let i = 1; i < 10; i++) expect((await claim(owner, team.slug, freshDomain())).status).toBe(201);
    const eleventh = await claim(owner, team.slug, freshDomain());
    expect(eleventh.status).toBe(422);
    expect(eleventh.body.error.message).toContain('at most 10');
  });
});

describe('joining through a verified domain', () => {
  it('lets a confirmed address at the domain join as MEMBER, once', async () => {
    const { owner, team, domain } = await verifiedTeam('member');
    const person = await personAt(domain);
    const joinable = await api.call('GET', '/api/joinable-teams', { token: person.token });
    expect(joinable.body.data).toEqual([
      { team: { id: team.id, name: `Team ${team.slug}`, slug: team.slug }, domain, join: 'member', requested: false },
    ]);
    const joined = await api.call('POST', `/api/teams/${team.slug}/join`, { token: person.token });
    expect(joined.status).toBe(200);
    expect(joined.body.data).toEqual({ status: 'MEMBER' });
    const members = await api.call('GET', `/api/teams/${team.slug}/members`, { token: owner.token });
    expect(members.body.data.find((m: { email: string }) => m.email === person.email)).toMatchObject({ role: 'MEMBER' });
    expect((await api.call('POST', `/api/teams/${team.slug}/join`, { token: person.token })).status).toBe(409);
    expect((await api.call('GET', '/api/joinable-teams', { token: person.token })).body.data).toEqual([]);
    const audit = await api.call('GET', `/api/teams/${team.slug}/audit?action=member.joined`, { token: owner.token });
    expect(audit.body.data[0]).toMatchObject({
      action: 'member.joined',
      changes: { role: { after: 'MEMBER' }, domain: { after: domain } },
    });
  });

  it('makes one membership when the same person joins twice at once', async () => {
    const { team, domain } = await verifiedTeam('member');
    const person = await personAt(domain);
    const answers = await Promise.all([0, 1, 2].map(() => api.call('POST', `/api/teams/${team.slug}/join`, { token: person.token })));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409, 409]);
  });

  it('refuses an unconfirmed address, another domain, a team whose domain says off, and a subdomain', async () => {
    const { owner, team, domain } = await verifiedTeam('member');
    const unconfirmed = await personAt(domain, 'unconfirmed', false);
    expect((await api.call('GET', '/api/joinable-teams', { token: unconfirmed.token })).body.data).toEqual([]);
    const refused = await api.call('POST', `/api/teams/${team.slug}/join`, { token: unconfirmed.token });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('email_not_verified');
    const elsewhere = await signUp(api, 'elsewhere');
    expect((await api.call('POST', `/api/teams/${team.slug}/join`, { token: elsewhere.token })).status).toBe(404);
    const sub = await personAt(`mail.${domain}`);
    expect((await api.call('POST', `/api/teams/${team.slug}/join`, { token: sub.token })).status).toBe(404);
    expect((await api.call('PUT', `/api/teams/${team.slug}/domains/${domain}`, { token: owner.token, json: { join: 'off' } })).status).toBe(
      200,
    );
    const person = await personAt(domain);
    expect((await api.call('POST', `/api/teams/${team.slug}/join`, { token: person.token })).status).toBe(404);
    expect((await api.call('GET', '/api/joinable-teams', { token: person.token })).body.data).toEqual([]);
  });

  it('asks to join where the domain says request; owners and admins accept or decline', async () => {
    const { owner, team, domain } = await verifiedTeam('request');
    const [asker, other] = [await personAt(domain, 'asker'), await personAt(domain, 'other')];
    const asked = await api.call('POST', `/api/teams/${team.slug}/join`, { token: asker.token });
    expect(asked.body.data).toEqual({ status: 'REQUESTED' });
    // Asking again changes nothing.
    expect((await api.call('POST', `/api/teams/${team.slug}/join`, { token: asker.token })).body.data).toEqual({ status: 'REQUESTED' });
    expect((await api.call('GET', '/api/joinable-teams', { token: asker.token })).body.data[0]).toMatchObject({
      join: 'request',
      requested: true,
    });
    await api.call('POST', `/api/teams/${team.slug}/join`, { token: other.token });
    const requests = await api.call('GET', `/api/teams/${team.slug}/join-requests`, { token: owner.token });
    expect(requests.body.data.map((r: { email: string }) => r.email).sort()).toEqual([asker.email, other.email].sort());
    const [askerId, otherId] = [asker, other].map(
      (u) => requests.body.data.find((r: { email: string }) => r.email === u.email).userId as number,
    );
    // A member may not see or answer requests.
    const member = await signUp(api, 'member');
    await addMember(api, team.slug, owner, member, 'MEMBER');
    expect((await api.call('GET', `/api/teams/${team.slug}/join-requests`, { token: member.token })).status).toBe(403);
    expect((await api.call('GET', `/api/teams/${team.slug}/join-requests`, { token: asker.token })).status).toBe(404);
    expect((await api.call('POST', `/api/teams/${team.slug}/join-requests/${askerId}`, { token: member.token })).status).toBe(403);
    expect((await api.call('DELETE', `/api/teams/${team.slug}/join-requests/${askerId}`, { token: member.token })).status).toBe(403);

    expect((await api.call('POST', `/api/teams/${team.slug}/join-requests/${askerId}`, { token: owner.token })).status).toBe(200);
    expect((await api.call('DELETE', `/api/teams/${team.slug}/join-requests/${otherId}`, { token: owner.token })).status).toBe(200);
    expect((await api.call('POST', `/api/teams/${team.slug}/join-requests/${otherId}`, { token: owner.token })).status).toBe(404);
    expect((await api.call('DELETE', `/api/teams/${team.slug}/join-requests/${otherId}`, { token: owner.token })).status).toBe(404);
    const members = (await api.call('GET', `/api/teams/${team.slug}/members`, { token: owner.token })).body.data.map(
      (m: { email: string }) => m.email,
    );
    expect(members).toContain(asker.email);
    expect(members).not.toContain(other.email);
    const actions = (await api.call('GET', `/api/teams/${team.slug}/audit`, { token: owner.token })).body.data.map(
      (e: { action: string }) => e.action,
    );
    expect(actions).toEqual(expect.arrayContaining(['join.requested', 'member.joined', 'join.declined']));
    // A request whose asker became a member meanwhile: accepting it says so.
    const third = await personAt(domain, 'third');
    await api.call('POST', `/api/teams/${team.slug}/join`, { token: third.token });
    await addMember(api, team.slug, owner, third, 'MEMBER');
    const thirdId = (await api.call('GET', `/api/teams/${team.slug}/join-requests`, { token: owner.token })).body.data[0].userId;
    expect((await api.call('POST', `/api/teams/${team.slug}/join-requests/${thirdId}`, { token: owner.token })).status).toBe(409);
    // ... and the request, which has nothing left to answer, is gone.
    expect((await api.call('GET', `/api/teams/${team.slug}/join-requests`, { token: owner.token })).body.data).toEqual([]);
  });

  it('needs an aal2 session to join a team that requires MFA', async () => {
    const { owner, team, domain } = await verifiedTeam('member');
    const { factorId, secret } = await enrolTotp(api, owner);
    const stepped = await challengeAndVerify(api, owner.token, factorId, totpCode(secret));
    const aal2 = stepped.body.data.session.access_token as string;
    expect(
      (await api.call('PUT', `/api/teams/${team.slug}`, { token: aal2, json: { name: 'Ruled', slug: team.slug, requireMfa: true } }))
        .status,
    ).toBe(200);
    const person = await personAt(domain);
    const refused = await api.call('POST', `/api/teams/${team.slug}/join`, { token: person.token });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('mfa_required');
  });
});

describe('re-checks and deletion', () => {
  const recheck = async (at: Date) => (await import('#lib/teams/domains/recheck.ts')).recheckDomains(await db(), at, () => true);
  const tomorrow = () => new Date(Date.now() + 25 * 3_600_000);

  it('lapses a domain whose record is gone: no more joins, nobody removed, another team may prove it', async () => {
    const { owner, team, domain, verification } = await verifiedTeam('member');
    const early = await personAt(domain, 'early');
    expect((await api.call('POST', `/api/teams/${team.slug}/join`, { token: early.token })).status).toBe(200);
    // Still there: confirmed, checked again a day later.
    expect(await recheck(tomorrow())).toMatchObject({ confirmed: expect.any(Number) });
    expect((await api.call('GET', `/api/teams/${team.slug}/domains`, { token: owner.token })).body.data[0].status).toBe('VERIFIED');
    dns.records.delete(verification.name);
    const result = await recheck(new Date(Date.now() + 50 * 3_600_000));
    expect(result.lapsed).toBeGreaterThanOrEqual(1);
    const [record] = (await api.call('GET', `/api/teams/${team.slug}/domains`, { token: owner.token })).body.data;
    expect(record).toMatchObject({ status: 'LAPSED', problem: expect.stringContaining('no TXT record') });
    const late = await personAt(domain, 'late');
    expect((await api.call('POST', `/api/teams/${team.slug}/join`, { token: late.token })).status).toBe(404);
    const members = (await api.call('GET', `/api/teams/${team.slug}/members`, { token: owner.token })).body.data.map(
      (m: { email: string }) => m.email,
    );
    expect(members).toContain(early.email);
    const audit = await api.call('GET', `/api/teams/${team.slug}/audit?action=domain.lapsed`, { token: owner.token });
    expect(audit.body.data[0]).toMatchObject({ actor: { userId: null, email: 'roster@roster.invalid' } });
    // Free again: a team that proves it now has it; the first may prove it again only once it is free.
    const next = await signUp(api, 'next');
    const nextTeam = await createTeam(api, next);
    const claimed = await claim(next, nextTeam.slug, domain);
    publish(claimed.body.data.verification);
    expect((await verify(next, nextTeam.slug, domain)).status).toBe(200);
  });

  it('keeps a domain whose lookup fails (a DNS outage proves nothing) and asks again later', async () => {
    const { owner, team, verification } = await verifiedTeam('member');
    dns.failing.add(verification.name);
    const result = await recheck(tomorrow());
    expect(result.deferred).toBeGreaterThanOrEqual(1);
    expect((await api.call('GET', `/api/teams/${team.slug}/domains`, { token: owner.token })).body.data[0].status).toBe('VERIFIED');
    dns.failing.delete(verification.name);
  });

  it('removes an owner item whose claim is gone, rather than keeping the domain due and taken for ever', async () => {
    const domain = freshDomain('orphan');
    await (
      await db()
    ).entities.domainOwner
      .create({ domain, teamId: 424242, verifiedAt: new Date().toISOString(), checkAfter: '2000-01-01T00:00:00.000Z' })
      .go();
    await recheck(new Date());
    expect((await (await db()).entities.domainOwner.get({ domain }).go()).data).toBeNull();
  });

  it("frees a deleted team's domains and requests with its cleanup", async () => {
    const { owner, team, domain } = await verifiedTeam('request');
    const asker = await personAt(domain);
    await api.call('POST', `/api/teams/${team.slug}/join`, { token: asker.token });
    expect((await api.call('DELETE', `/api/teams/${team.slug}`, { token: owner.token })).status).toBe(200);
    const { cleanUpTeam } = await import('#lib/teams/cleanup.ts');
    for (let i = 0; i < 10 && !(await cleanUpTeam(await db(), team.id, () => true)).done; i++);
    expect((await (await db()).entities.domainOwner.get({ domain }).go()).data).toBeNull();
    expect((await (await db()).entities.teamDomain.query.primary({ teamId: team.id }).go()).data).toEqual([]);
    expect((await (await db()).entities.joinRequest.query.primary({ teamId: team.id }).go()).data).toEqual([]);
  });
});
