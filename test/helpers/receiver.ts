import { type IncomingHttpHeaders, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  url: string;
}

/**
 * A webhook receiver on 127.0.0.1 (node:http) that records each request and answers with `answer`
 * (which may also never answer). Listen with `server.listen(0, '127.0.0.1')`.
 */
export const receiver = (answer: (req: Received, res: ServerResponse) => void) => {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), url: req.url ?? '' };
      received.push(r);
      answer(r, res);
    });
  });
  return {
    received,
    server,
    url: (path = '/hook') => `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`,
    port: () => (server.address() as AddressInfo).port,
  };
};
