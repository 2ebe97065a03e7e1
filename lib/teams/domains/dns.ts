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

/** One lookup's whole time, whatever the resolver's retries and servers (c-ares doubles its wait on each try). */
export const LOOKUP_DEADLINE_MS = 3000;

/** A resolver per lookup, so that the deadline cancels this lookup and no other. */
const resolverOf = (): Resolver => {
  const made = new Resolver({ timeout: 1500, tries: 1 });
  if (config.dnsServers.length > 0) made.setServers(config.dnsServers);
  return made;
};

/** The TXT records at `name`, or the lookup's error code: `ETIMEOUT` past LOOKUP_DEADLINE_MS. */
const resolveTxt = async (name: string): Promise<string[][]> => {
  const resolver = resolverOf();
  const deadline = setTimeout(() => resolver.cancel(), LOOKUP_DEADLINE_MS);
  try {
    return await resolver.resolveTxt(name);
  } catch (error) {
    if ((error as { code?: string }).code === 'ECANCELLED') throw Object.assign(new Error(`${name}: timed out`), { code: 'ETIMEOUT' });
    throw error;
  } finally {
    clearTimeout(deadline);
  }
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
    records = await resolveTxt(name);
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
