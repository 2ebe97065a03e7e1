import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { type Server, createServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Certificate {
  key: string;
  cert: string;
}

/**
 * A self-signed certificate for 127.0.0.1, made by the openssl command (every CI image has it): what
 * a test needs to serve https on loopback, for clients that only speak https (aws-jwt-verify).
 */
export const loopbackCertificate = (): Certificate => {
  const dir = mkdtempSync(join(tmpdir(), 'roster-tls-'));
  const [key, cert] = [join(dir, 'key.pem'), join(dir, 'cert.pem')];
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ],
    { stdio: 'ignore' },
  );
  return { key: readFileSync(key, 'utf8'), cert: readFileSync(cert, 'utf8') };
};

/** Headers of one connection, not of the request: fetch sets its own. */
const HOP_BY_HOP = new Set(['host', 'connection', 'keep-alive', 'content-length', 'transfer-encoding']);

/** An https server on `port` that forwards every request to `target` (an http base URL) and answers what it answered. */
export const tlsProxy = async (target: string, certificate: Certificate, port: number): Promise<Server> => {
  const server = createServer(certificate, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const headers = Object.fromEntries(
        Object.entries(req.headers).filter((e): e is [string, string] => typeof e[1] === 'string' && !HOP_BY_HOP.has(e[0])),
      );
      const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
      fetch(`${target}${req.url ?? '/'}`, { method: req.method ?? 'GET', headers, ...(body ? { body } : {}) })
        .then(async (answer) => {
          res.writeHead(answer.status, Object.fromEntries([...answer.headers].filter(([name]) => !HOP_BY_HOP.has(name))));
          res.end(Buffer.from(await answer.arrayBuffer()));
        })
        .catch(() => {
          res.writeHead(502);
          res.end();
        });
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return server;
};
