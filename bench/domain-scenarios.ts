import { type DnsServer, startDnsServer } from '#test/helpers/dns-server.ts';
import { type ApiRequest, callDirect, expectStatus } from './invoke.ts';
import { type Account, type Team, createTeam, fresh, inParallel, signUp } from './seed.ts';
import type { Scenario } from './scenarios.ts';

/**
 * Team domains' scenarios (docs/domains.md): the proofs are looked up at a DNS server this process
 * runs on loopback, on the port run.ts gave DNS_SERVERS. A claim, a proof, a join and a request
 * each work once, so those calls get a pool.
 */

/** Made ahead for the calls that use one up: enough for the load part's sequential runs. */
const POOL = 60;

let dns: Promise<DnsServer> | undefined;
const dnsServer = (): Promise<DnsServer> => {
  const address = process.env.DNS_SERVERS;
  if (!address) throw new Error('DNS_SERVERS is not set: run the benchmark with npm run bench');
  return (dns ??= startDnsServer(Number(address.split(':')[1])));
};

const call = async (req: ApiRequest, status: number, what: string) => expectStatus(await callDirect(req), status, what);

const freshDomain = (): string => `${fresh('bench')}.test`;

/** Claims `domain` for the team (with `join`); its TXT record, published when `publish`. */
const claim = async (owner: Account, team: Team, domain: string, join: string, publish: boolean) => {
  const { body } = await call(
    { method: 'POST', path: `/api/teams/${team.slug}/domains`, token: owner.token, json: { domain, join } },
    201,
    'claim',
  );
  if (publish) (await dnsServer()).records.set(body.data.verification.name, [[body.data.verification.value]]);
  return domain;
};

/** A team whose `domain` is verified with `join`. */
const verifiedTeam = async (join: string) => {
  const owner = await signUp('domain-owner');
  const team = await createTeam(owner, 'domains');
  const domain = await claim(owner, team, freshDomain(), join, true);
  await call({ method: 'POST', path: `/api/teams/${team.slug}/domains/${domain}/verify`, token: owner.token }, 200, 'verify');
  return { owner, team, domain };
};

/** `count` claims (at most POOL), ten a team (a team's limit): the owner, team and domain of each. */
const claims = async (count: number, publish: boolean) => {
  const wanted = Math.min(count, POOL);
  const teams = await inParallel(Math.ceil(wanted / 10), 4, async () => {
    const owner = await signUp('domain-owner');
    return { owner, team: await createTeam(owner, 'domains') };
  });
  return inParallel(wanted, 4, async (i) => {
    const { owner, team } = teams[Math.floor(i / 10)] as { owner: Account; team: Team };
    return { owner, team, domain: await claim(owner, team, freshDomain(), 'member', publish) };
  });
};

/** A team whose verified domain asks for requests, and `count` requests to answer. */
const requests = async (count: number) => {
  const { owner, team, domain } = await verifiedTeam('request');
  const askers = await inParallel(Math.min(count, POOL), 4, async () => {
    const asker = await signUp('asker', { domain });
    await call({ method: 'POST', path: `/api/teams/${team.slug}/join`, token: asker.token }, 200, 'ask');
    return asker;
  });
  const listed = await call(
    { method: 'GET', path: `/api/teams/${team.slug}/join-requests?limit=1000`, token: owner.token },
    200,
    'requests',
  );
  const ids = new Map((listed.body.data as { email: string; userId: number }[]).map((r) => [r.email, r.userId]));
  return { owner, team, ids: askers.map((a) => ids.get(a.email) as number) };
};

const at =
  <T>(pool: readonly T[], make: (item: T) => ApiRequest) =>
  (i: number) => {
    const item = pool[i];
    return item === undefined ? undefined : make(item);
  };

export const domainScenarios = (): Scenario[] => [
  {
    label: 'GET /api/teams/{slug}/domains',
    name: 'teams-domains-list',
    status: 200,
    prepare: async () => {
      const { owner, team } = await verifiedTeam('member');
      return () => ({ method: 'GET', path: `/api/teams/${team.slug}/domains`, token: owner.token });
    },
  },
  {
    label: 'POST /api/teams/{slug}/domains',
    name: 'teams-domains-create',
    status: 201,
    prepare: async (count) => {
      const teams = await inParallel(Math.ceil(Math.min(count, POOL) / 10), 4, async () => {
        const owner = await signUp('domain-owner');
        return { owner, team: await createTeam(owner, 'domains') };
      });
      return (i) => {
        const t = teams[Math.floor(i / 10)];
        return t && { method: 'POST', path: `/api/teams/${t.team.slug}/domains`, token: t.owner.token, json: { domain: freshDomain() } };
      };
    },
  },
  {
    label: 'PUT /api/teams/{slug}/domains/{domain}',
    name: 'teams-domains-update',
    status: 200,
    prepare: async () => {
      const { owner, team, domain } = await verifiedTeam('request');
      // Each call changes the setting (the same one again writes nothing).
      return (i) => ({
        method: 'PUT',
        path: `/api/teams/${team.slug}/domains/${domain}`,
        token: owner.token,
        json: { join: i % 2 === 0 ? 'member' : 'request' },
      });
    },
  },
  {
    label: 'DELETE /api/teams/{slug}/domains/{domain}',
    name: 'teams-domains-delete',
    status: 200,
    prepare: async (count) =>
      at(await claims(count, false), (c) => ({
        method: 'DELETE',
        path: `/api/teams/${c.team.slug}/domains/${c.domain}`,
        token: c.owner.token,
      })),
  },
  {
    label: 'POST /api/teams/{slug}/domains/{domain}/verify',
    name: 'teams-domains-verify',
    status: 200,
    prepare: async (count) =>
      at(await claims(count, true), (c) => ({
        method: 'POST',
        path: `/api/teams/${c.team.slug}/domains/${c.domain}/verify`,
        token: c.owner.token,
      })),
  },
  {
    label: 'GET /api/joinable-teams',
    name: 'teams-joinable',
    status: 200,
    prepare: async () => {
      const { domain } = await verifiedTeam('member');
      const person = await signUp('joiner', { domain });
      return () => ({ method: 'GET', path: '/api/joinable-teams', token: person.token });
    },
  },
  {
    label: 'POST /api/teams/{slug}/join',
    name: 'teams-join',
    status: 200,
    prepare: async (count) => {
      const { team, domain } = await verifiedTeam('member');
      const people = await inParallel(Math.min(count, POOL), 4, () => signUp('joiner', { domain }));
      return at(people, (p) => ({ method: 'POST', path: `/api/teams/${team.slug}/join`, token: p.token }));
    },
  },
  {
    label: 'GET /api/teams/{slug}/join-requests',
    name: 'teams-join-requests',
    status: 200,
    prepare: async () => {
      const { owner, team } = await requests(5);
      return () => ({ method: 'GET', path: `/api/teams/${team.slug}/join-requests`, token: owner.token });
    },
  },
  {
    label: 'POST /api/teams/{slug}/join-requests/{id}',
    name: 'teams-join-accept',
    status: 200,
    prepare: async (count) => {
      const { owner, team, ids } = await requests(count);
      return at(ids, (id) => ({ method: 'POST', path: `/api/teams/${team.slug}/join-requests/${id}`, token: owner.token }));
    },
  },
  {
    label: 'DELETE /api/teams/{slug}/join-requests/{id}',
    name: 'teams-join-decline',
    status: 200,
    prepare: async (count) => {
      const { owner, team, ids } = await requests(count);
      return at(ids, (id) => ({ method: 'DELETE', path: `/api/teams/${team.slug}/join-requests/${id}`, token: owner.token }));
    },
  },
];
