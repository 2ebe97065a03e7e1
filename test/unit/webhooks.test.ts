/**
 * Signed webhooks without the table (lib/events/webhooks/, docs/webhooks.md): the address classifier over
 * many literal addresses, the URL rules, Standard Webhooks signatures checked with the ecosystem's
 * own `standardwebhooks` package, and one delivery to real local HTTP receivers (node:http): one
 * that verifies, one that fails, one that hangs, one that redirects, and the DNS rebinding guard.
 */
import { type AddressInfo, createServer as createNetServer } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEntry } from '#lib/wire/responses.ts';
import {
  type Resolver,
  RefusedUrl,
  addressKind,
  checkedAddresses,
  mayReceive,
  parseWebhookUrl,
  systemResolver,
} from '#lib/events/webhooks/addresses.ts';
import { deliver, webhookMessage } from '#lib/events/webhooks/deliver.ts';
import { newWebhookSecret, signatureHeaders } from '#lib/events/webhooks/signing.ts';
import { receiver } from '../helpers/receiver.ts';

describe('address classifier', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['::1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['::', 'unspecified'],
    ['10.0.0.7', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['::ffff:10.1.2.3', 'private'],
    ['::ffff:192.168.0.1', 'private'],
    ['100.64.0.1', 'shared (carrier-grade NAT)'],
    ['100.127.255.255', 'shared (carrier-grade NAT)'],
    ['169.254.169.254', 'link-local'],
    ['::ffff:169.254.169.254', 'link-local'],
    // Only ::ffff:0:0/96 is IPv4-mapped: these merely start with ::ffff (RFC 2765's translated form among them).
    ['::ffff:0:a9fe:a9fe', 'not global unicast'],
    ['::ffff:1:2:3:4', 'not global unicast'],
    ['fe80::1', 'link-local'],
    ['fec0::1', 'link-local'],
    ['fc00::1', 'unique-local'],
    ['fd12:3456:789a::1', 'unique-local'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['ff02::1', 'multicast'],
    ['192.0.2.1', 'reserved for documentation'],
    ['198.51.100.7', 'reserved for documentation'],
    ['203.0.113.9', 'reserved for documentation'],
    ['2001:db8::1', 'reserved for documentation'],
    ['3fff::1', 'reserved for documentation'],
    ['198.18.0.1', 'reserved for benchmarking'],
    ['198.19.255.255', 'reserved for benchmarking'],
    ['192.0.0.8', 'reserved'],
    ['192.88.99.1', 'reserved'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'reserved'],
    ['::7f00:1', 'reserved'],
    ['64:ff9b::7f00:1', 'reserved'],
    ['64:ff9b:1::1', 'reserved'],
    ['100::1', 'reserved'],
    ['2001::1', 'reserved'],
    ['2002:7f00:1::1', 'reserved'],
    ['4000::1', 'not global unicast'],
    ['1.1.1.1', 'public'],
    ['8.8.8.8', 'public'],
    ['93.184.216.34', 'public'],
    ['100.63.255.255', 'public'],
    ['100.128.0.0', 'public'],
    ['172.15.255.255', 'public'],
    ['172.32.0.0', 'public'],
    ['192.169.0.1', 'public'],
    ['::ffff:8.8.8.8', 'public'],
    ['2606:4700:4700::1111', 'public'],
    ['2a00:1450:4001:80b::200e', 'public'],
  ])('%s is %s', (address, kind) => {
    expect(addressKind(address)).toBe(kind);
  });

  it('allows loopback, and only loopback, when private URLs are allowed', () => {
    expect(mayReceive('127.0.0.1', true)).toBe('allowed');
    expect(mayReceive('::1', true)).toBe('allowed');
    expect(mayReceive('127.0.0.1', false)).toBe('loopback');
    expect(mayReceive('10.0.0.1', true)).toBe('private');
    expect(mayReceive('169.254.169.254', true)).toBe('link-local');
    expect(mayReceive('1.1.1.1', false)).toBe('allowed');
  });
});

describe('webhook URL rules', () => {
  const refusal = (run: () => unknown) => {
    try {
      run();
    } catch (error) {
      if (error instanceof RefusedUrl) return error.message;
      throw error;
    }
    return undefined;
  };

  it('takes https only, http too when private URLs are allowed, never credentials or a fragment', () => {
    expect(parseWebhookUrl('https://hooks.example.com/x?y=1', false).host).toBe('hooks.example.com');
    expect(parseWebhookUrl('https://[2606:4700::1]:8443/x', false).host).toBe('2606:4700::1');
    expect(refusal(() => parseWebhookUrl('http://hooks.example.com/', false))).toBe('must be an https:// URL');
    expect(parseWebhookUrl('http://127.0.0.1:8080/', true).host).toBe('127.0.0.1');
    expect(refusal(() => parseWebhookUrl('ftp://hooks.example.com/', true))).toBe('must be an https:// URL');
    expect(refusal(() => parseWebhookUrl('hooks.example.com/x', false))).toBe('must be an absolute https:// URL');
    expect(refusal(() => parseWebhookUrl('https://user:pw@hooks.example.com/', false))).toBe('must not contain a user name or password');
    expect(refusal(() => parseWebhookUrl('https://user@hooks.example.com/', false))).toBe('must not contain a user name or password');
    expect(refusal(() => parseWebhookUrl('https://hooks.example.com/#x', false))).toBe('must not contain a fragment (#…)');
  });

  it('refuses a host when any address it resolves to is not public, through the system resolver too', async () => {
    const some =
      (...addresses: string[]): Resolver =>
      async () =>
        addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    await expect(checkedAddresses('hooks.example.com', false, some('93.184.216.34', '2606:2800::1'))).resolves.toHaveLength(2);
    await expect(checkedAddresses('hooks.example.com', false, some('93.184.216.34', '10.0.0.1'))).rejects.toThrow(
      'host hooks.example.com resolves to 10.0.0.1, which is private: webhooks are sent to public addresses only',
    );
    await expect(checkedAddresses('hooks.example.com', false, some())).rejects.toThrow('host hooks.example.com does not resolve');
    await expect(checkedAddresses('169.254.169.254', false, some('1.1.1.1'))).rejects.toThrow('169.254.169.254 is link-local');
    // The real resolver, offline: /etc/hosts names localhost, and `.invalid` never resolves.
    await expect(checkedAddresses('localhost', false, systemResolver)).rejects.toThrow(
      /^host localhost resolves to (127\.0\.0\.1|::1), which is loopback/,
    );
    await expect(checkedAddresses('localhost', true, systemResolver)).resolves.not.toHaveLength(0);
    await expect(checkedAddresses('hooks.example.invalid', false, systemResolver)).rejects.toThrow(
      /^host hooks\.example\.invalid does not resolve/,
    );
  });
});

describe('Standard Webhooks signatures', () => {
  const body = JSON.stringify({ type: 'team.created', timestamp: '2026-11-26T09:30:00.000Z', data: {} });

  it('issues whsec_ secrets of 32 random bytes', () => {
    const secret = newWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);
    expect(newWebhookSecret()).not.toBe(secret);
  });

  it('signs as the standardwebhooks package verifies, and a tampered body, an old timestamp or another secret fail', () => {
    const secret = newWebhookSecret();
    const now = new Date();
    const headers = signatureHeaders(secret, 'msg_1', now, body);
    expect(headers['webhook-timestamp']).toBe(String(Math.floor(now.getTime() / 1000)));
    expect(headers['webhook-signature']).toBe(new Webhook(secret).sign('msg_1', new Date(Math.floor(now.getTime() / 1000) * 1000), body));
    expect(new Webhook(secret).verify(body, { ...headers })).toEqual(JSON.parse(body));
    expect(() => new Webhook(secret).verify(body.replace('team.created', 'team.deleted'), { ...headers })).toThrow(/signature/i);
    const old = signatureHeaders(secret, 'msg_1', new Date(now.getTime() - 10 * 60_000), body);
    expect(() => new Webhook(secret).verify(body, { ...old })).toThrow(/too old/i);
    expect(() => new Webhook(newWebhookSecret()).verify(body, { ...headers })).toThrow(/signature/i);
  });
});

describe('delivering one message', () => {
  const secret = newWebhookSecret();
  const entry: AuditEntry = {
    id: '019ac1f2-6b3d-7e4f-8a9b-0c1d2e3f4a5b',
    createdAt: '2026-11-26T09:30:00.000Z',
    action: 'member.role_changed',
    actor: { userId: 1764751230001, email: 'ada@example.com' },
    target: { type: 'member', id: 1764751234901, userId: 1764751230002 },
    changes: { role: { before: 'MEMBER', after: 'ADMIN' } },
    requestId: 'c6a1f0d2-4b3e-4f5a-9b8c-7d6e5f4a3b2c',
    sourceIp: '203.0.113.7',
  };
  const message = webhookMessage(entry, { id: 1764751220001, slug: 'acme' });

  const verifying = receiver((r, res) => {
    try {
      new Webhook(secret).verify(r.body, r.headers as Record<string, string>);
      res.writeHead(204).end();
    } catch {
      res.writeHead(400).end('bad signature');
    }
  });
  const failing = receiver((_, res) => res.writeHead(500).end('x'.repeat(100_000)));
  const hanging = receiver(() => undefined);
  const redirecting = receiver((_, res) => res.writeHead(307, { location: verifying.url('/moved') }).end());
  const all = [verifying, failing, hanging, redirecting];

  beforeAll(async () => {
    await Promise.all(all.map((r) => new Promise<void>((done) => r.server.listen(0, '127.0.0.1', done))));
  });
  afterAll(async () => {
    for (const r of all) r.server.closeAllConnections();
    await Promise.all(all.map((r) => new Promise((done) => r.server.close(done))));
  });

  it('POSTs the signed JSON that standardwebhooks verifies, with the audit entry id as webhook-id', async () => {
    const result = await deliver({ url: verifying.url(), secret }, message, { allowPrivate: true });
    expect(result).toEqual({ ok: true, status: 204, durationMs: expect.any(Number) });
    const [got] = verifying.received.slice(-1);
    expect(got?.headers['webhook-id']).toBe(entry.id);
    expect(got?.headers['content-type']).toBe('application/json');
    expect(JSON.parse(got?.body as string)).toEqual({
      type: 'member.role_changed',
      timestamp: entry.createdAt,
      data: { ...entry, team: { id: 1764751220001, slug: 'acme' } },
    });
    // Another secret's delivery is refused by the receiver: a failure to retry.
    expect(await deliver({ url: verifying.url(), secret: newWebhookSecret() }, message, { allowPrivate: true })).toMatchObject({
      ok: false,
      status: 400,
    });
  });

  it('takes an answer other than 2xx as a failure, reading only the start of its body', async () => {
    expect(await deliver({ url: failing.url(), secret }, message, { allowPrivate: true })).toEqual({
      ok: false,
      status: 500,
      error: 'answered 500',
      durationMs: expect.any(Number),
    });
  });

  it('gives up on a receiver that does not answer in time', async () => {
    const result = await deliver({ url: hanging.url(), secret }, message, { allowPrivate: true, timeoutMs: 300 });
    expect(result).toMatchObject({ ok: false, error: 'timed out after 300 ms' });
    expect(result.durationMs).toBeGreaterThanOrEqual(290);
    expect(result.durationMs).toBeLessThan(2000);
    expect(hanging.received).toHaveLength(1);
  });

  it('does not follow a redirect', async () => {
    const before = verifying.received.length;
    expect(await deliver({ url: redirecting.url(), secret }, message, { allowPrivate: true })).toMatchObject({ ok: false, status: 307 });
    expect(verifying.received).toHaveLength(before);
  });

  it('refuses loopback at delivery time unless private URLs are allowed, without connecting', async () => {
    const before = verifying.received.length;
    const result = await deliver({ url: verifying.url(), secret }, message, { allowPrivate: false });
    expect(result).toMatchObject({ ok: false, error: 'refused: must be an https:// URL' });
    const viaName = await deliver({ url: `https://localhost:${verifying.port()}/hook`, secret }, message, { allowPrivate: false });
    expect(viaName).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^refused: host localhost resolves to .*, which is loopback/),
    });
    expect(verifying.received).toHaveLength(before);
  });

  it('connects to the address it checked, not to what the name resolves to afterwards (DNS rebinding)', async () => {
    // Any connection at all to 127.0.0.1 on this port would be the rebinding succeeding.
    let connections = 0;
    const trap = createNetServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((done) => trap.listen(0, '127.0.0.1', done));
    let lookups = 0;
    // Public on the check, loopback on any later lookup: the connection must not ask again.
    const rebinding: Resolver = async () => [{ address: lookups++ === 0 ? '93.184.216.34' : '127.0.0.1', family: 4 }];
    const port = (trap.address() as AddressInfo).port;
    const result = await deliver({ url: `https://rebind.example.test:${port}/hook`, secret }, message, {
      allowPrivate: false,
      resolve: rebinding,
      timeoutMs: 500,
    });
    await new Promise((done) => trap.close(done));
    expect(result.ok).toBe(false);
    expect(lookups).toBe(1);
    expect(connections).toBe(0);
  });

  it('connects through the checked address even where the system resolver knows nothing of the name', async () => {
    // Proves the socket takes the pinned address: `pinned.example.test` resolves nowhere else.
    const pinned: Resolver = async () => [{ address: '127.0.0.1', family: 4 }];
    const result = await deliver({ url: `http://pinned.example.test:${verifying.port()}/hook`, secret }, message, {
      allowPrivate: true,
      resolve: pinned,
    });
    expect(result).toMatchObject({ ok: true, status: 204 });
    expect(verifying.received.at(-1)?.headers.host).toBe(`pinned.example.test:${verifying.port()}`);
  });
});
