import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/**
 * Where webhooks may go: public unicast addresses only. Each kind of address that is not one is a
 * set of IANA special-purpose ranges (RFC 6890 and its updates); its name is what the 422 says
 * ("10.0.0.7 is private").
 * Node's BlockList also matches an IPv4-mapped IPv6 address (`::ffff:127.0.0.1`) against the IPv4
 * ranges, so a mapped loopback is loopback.
 */
const RANGES = {
  loopback: [
    ['127.0.0.0', 8, 'ipv4'],
    ['::1', 128, 'ipv6'],
  ],
  unspecified: [
    ['0.0.0.0', 8, 'ipv4'],
    ['::', 128, 'ipv6'],
  ],
  private: [
    ['10.0.0.0', 8, 'ipv4'],
    ['172.16.0.0', 12, 'ipv4'],
    ['192.168.0.0', 16, 'ipv4'],
  ],
  'shared (carrier-grade NAT)': [['100.64.0.0', 10, 'ipv4']],
  'link-local': [
    ['169.254.0.0', 16, 'ipv4'],
    ['fe80::', 10, 'ipv6'],
    ['fec0::', 10, 'ipv6'],
  ],
  'unique-local': [['fc00::', 7, 'ipv6']],
  multicast: [
    ['224.0.0.0', 4, 'ipv4'],
    ['ff00::', 8, 'ipv6'],
  ],
  'reserved for documentation': [
    ['192.0.2.0', 24, 'ipv4'],
    ['198.51.100.0', 24, 'ipv4'],
    ['203.0.113.0', 24, 'ipv4'],
    ['2001:db8::', 32, 'ipv6'],
    ['3fff::', 20, 'ipv6'],
  ],
  'reserved for benchmarking': [['198.18.0.0', 15, 'ipv4']],
  /**
   * Protocol assignments, the 6to4 relay, the old "class E" and broadcast, IPv4-compatible IPv6,
   * discard-only, and IPv6 prefixes that carry an IPv4 address of their own (NAT64, 6to4, Teredo,
   * all in 2001::/23 or named here): refused whole rather than decoded, since none is a
   * webhook receiver's real address.
   */
  reserved: [
    ['192.0.0.0', 24, 'ipv4'],
    ['192.88.99.0', 24, 'ipv4'],
    ['240.0.0.0', 4, 'ipv4'],
    ['::', 96, 'ipv6'],
    ['64:ff9b::', 96, 'ipv6'],
    ['64:ff9b:1::', 48, 'ipv6'],
    ['100::', 64, 'ipv6'],
    ['2001::', 23, 'ipv6'],
    ['2002::', 16, 'ipv6'],
  ],
} as const satisfies Record<string, readonly (readonly [string, number, 'ipv4' | 'ipv6'])[]>;

export type AddressKind = keyof typeof RANGES | 'public' | 'not global unicast';

const LISTS = Object.entries(RANGES).map(([kind, ranges]) => {
  const list = new BlockList();
  for (const [network, prefix, type] of ranges) list.addSubnet(network, prefix, type);
  return [kind as keyof typeof RANGES, list] as const;
});

/** IPv6 unicast that is routed on the Internet lives in 2000::/3; the rest is reserved or special. */
const GLOBAL_UNICAST = new BlockList();
GLOBAL_UNICAST.addSubnet('2000::', 3, 'ipv6');

/** IPv4-mapped IPv6 (::ffff:a.b.c.d), exactly that /96: BlockList judges it by its IPv4 ranges above. */
const IPV4_MAPPED = new BlockList();
IPV4_MAPPED.addSubnet('::ffff:0:0', 96, 'ipv6');

/** What kind of address a literal IPv4 or IPv6 address is; 'public' is the only one webhooks go to. */
export const addressKind = (address: string): AddressKind => {
  const type = isIP(address) === 6 ? 'ipv6' : 'ipv4';
  for (const [kind, list] of LISTS) if (list.check(address, type)) return kind;
  // Mapped IPv4 (already judged above by its IPv4 ranges) is outside 2000::/3 but public.
  if (type === 'ipv6' && !GLOBAL_UNICAST.check(address, 'ipv6') && !IPV4_MAPPED.check(address, 'ipv6')) return 'not global unicast';
  return 'public';
};

/** Whether webhooks may go to an address: public, or loopback when private URLs are allowed (local use and tests). */
export const mayReceive = (address: string, allowPrivate: boolean): AddressKind | 'allowed' => {
  const kind = addressKind(address);
  return kind === 'public' || (allowPrivate && kind === 'loopback') ? 'allowed' : kind;
};

export interface Resolved {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to every address it has (A and AAAA), as the system resolver would connect to them. */
export type Resolver = (host: string) => Promise<readonly Resolved[]>;

export const systemResolver: Resolver = async (host) =>
  (await lookup(host, { all: true, verbatim: true })).map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));

/** How long a host's resolution may take before the URL is refused (registration) or the delivery fails. */
export const RESOLVE_TIMEOUT_MS = 3000;

/** Why a webhook URL is refused: the text of the 422's `fields.url`, or a failed delivery's `error`. */
export class RefusedUrl extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RefusedUrl';
  }
}

/**
 * The parts of a webhook URL that need no network (its length is WebhookBody's): https (http too when private URLs are
 * allowed), no user name or password, no fragment. Returns the host to resolve, without an IPv6
 * literal's brackets. Throws RefusedUrl.
 */
export const parseWebhookUrl = (raw: string, allowPrivate: boolean): { url: URL; host: string } => {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new RefusedUrl('must be an absolute https:// URL');
  }
  const schemes = allowPrivate ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(url.protocol)) throw new RefusedUrl('must be an https:// URL');
  if (url.username !== '' || url.password !== '') throw new RefusedUrl('must not contain a user name or password');
  if (url.hash !== '') throw new RefusedUrl('must not contain a fragment (#…)');
  return { url, host: url.hostname.replace(/^\[(.*)\]$/, '$1') };
};

const withTimeout = async <T>(work: Promise<T>, ms: number, message: string): Promise<T> => {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new RefusedUrl(message)), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
};

/**
 * The addresses a webhook to `host` may connect to: the literal itself, or every address the host
 * resolves to, each of which must be allowed (one private record among public ones refuses the
 * host: a resolver may hand out any of them). Throws RefusedUrl.
 */
export const checkedAddresses = async (host: string, allowPrivate: boolean, resolve: Resolver): Promise<readonly Resolved[]> => {
  const literal = isIP(host);
  let found: readonly Resolved[];
  if (literal !== 0) found = [{ address: host, family: literal === 6 ? 6 : 4 }];
  else {
    try {
      found = await withTimeout(resolve(host), RESOLVE_TIMEOUT_MS, `host ${host} did not resolve within ${RESOLVE_TIMEOUT_MS / 1000} s`);
    } catch (error) {
      if (error instanceof RefusedUrl) throw error;
      const code = error instanceof Error && 'code' in error ? ` (${String(error.code)})` : '';
      throw new RefusedUrl(`host ${host} does not resolve${code}`);
    }
    if (found.length === 0) throw new RefusedUrl(`host ${host} does not resolve`);
  }
  for (const { address } of found) {
    const verdict = mayReceive(address, allowPrivate);
    if (verdict !== 'allowed') {
      const what = literal === 0 ? `host ${host} resolves to ${address}, which` : address;
      throw new RefusedUrl(`${what} is ${verdict}: webhooks are sent to public addresses only`);
    }
  }
  return found;
};
