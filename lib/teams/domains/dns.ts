import { Resolver } from 'node:dns/promises';
import { config } from '#lib/core/config.ts';

/**
 * The DNS half of a domain proof (docs/domains.md): the TXT record `_roster-challenge.<domain>`
 * must hold `roster-domain-verification=<token>`. The resolver is the system's, or DNS_SERVERS
 * (a server the tests run on loopback); each lookup is bounded, well inside a function's 10 s.
 */

export const RECORD_PREFIX = '_roster-challenge';
export const VALUE_PREFIX = 'roster-domain-verification=';

export const recordName = (domain: string): string => `${RECORD_PREFIX}.${domain}`;
export const recordValue = (token: string): string => `${VALUE_PREFIX}${token}`;

let resolver: Resolver | undefined;
const resolverOf = (): Resolver => {
  if (resolver) return resolver;
  const made = new Resolver({ timeout: 2000, tries: 2 });
  if (config.dnsServers.length > 0) made.setServers(config.dnsServers);
  resolver = made;
  return made;
};

/**
 * What a check found: the proof, or why not, in words for the owner (no record, another value, DNS
 * failed). `transient`: the lookup itself failed, which proves nothing either way.
 */
export type Proof = { proven: true } | { proven: false; transient: boolean; problem: string };

const NO_RECORD = new Set(['ENODATA', 'ENOTFOUND', 'NXDOMAIN']);

export const checkProof = async (domain: string, token: string): Promise<Proof> => {
  const name = recordName(domain);
  let records: string[][];
  try {
    records = await resolverOf().resolveTxt(name);
  } catch (error) {
    const code = (error as { code?: string }).code ?? 'error';
    return NO_RECORD.has(code)
      ? { proven: false, transient: false, problem: `no TXT record at ${name}` }
      : { proven: false, transient: true, problem: `the DNS lookup of ${name} failed (${code})` };
  }
  // A TXT record may come in several strings of at most 255 characters: they are one value.
  const values = records.map((chunks) => chunks.join(''));
  if (values.includes(recordValue(token))) return { proven: true };
  return { proven: false, transient: false, problem: `the TXT records at ${name} do not include ${recordValue(token)}` };
};
