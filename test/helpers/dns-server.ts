import { createSocket } from 'node:dgram';
import type { AddressInfo } from 'node:net';
import * as packet from 'dns-packet';

/**
 * A DNS server on a loopback UDP port that answers TXT questions from `records` (name -> its TXT
 * records, each one or more strings), NXDOMAIN for any other name, and SERVFAIL for the names in
 * `failing`, and nothing for those in `silent`: what Roster's domain proofs ask a real resolver (DNS_SERVERS points them here).
 */
export interface DnsServer {
  /** `127.0.0.1:port`, as DNS_SERVERS takes it. */
  address: string;
  records: Map<string, string[][]>;
  failing: Set<string>;
  /** Names it never answers (a server that hangs). */
  silent: Set<string>;
  /** Questions received, by name. */
  asked: string[];
  stop: () => Promise<void>;
}

export const startDnsServer = async (port = 0): Promise<DnsServer> => {
  const socket = createSocket('udp4');
  const records = new Map<string, string[][]>();
  const failing = new Set<string>();
  const silent = new Set<string>();
  const asked: string[] = [];
  socket.on('message', (message, from) => {
    const query = packet.decode(message);
    const [question] = query.questions ?? [];
    if (!question) return;
    const name = question.name.toLowerCase();
    asked.push(name);
    if (silent.has(name)) return;
    const found = records.get(name);
    const rcode = failing.has(name) ? 'SERVFAIL' : found ? 'NOERROR' : 'NXDOMAIN';
    const answer = packet.encode({
      id: query.id,
      type: 'response',
      flags: packet.RECURSION_DESIRED | packet.RECURSION_AVAILABLE | (rcode === 'SERVFAIL' ? 2 : rcode === 'NXDOMAIN' ? 3 : 0),
      questions: [question],
      answers:
        rcode === 'NOERROR' && question.type === 'TXT'
          ? (found ?? []).map((strings) => ({ type: 'TXT' as const, name: question.name, ttl: 60, class: 'IN' as const, data: strings }))
          : [],
    });
    socket.send(answer, from.port, from.address);
  });
  await new Promise<void>((resolve) => socket.bind(port, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${(socket.address() as AddressInfo).port}`,
    records,
    failing,
    silent,
    asked,
    stop: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
};
