import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callApi } from '../helpers/api.ts';

/**
 * Two local servers in two processes on one DynamoDB Local and one table: two function instances
 * that share nothing but the table (and, locally, the key files in DATA_DIR), as on Lambda.
 */
interface Instance {
  url: string;
  child: ChildProcess;
}

const startInstance = async (): Promise<Instance> => {
  const child = spawn(process.execPath, ['infra/local.ts'], {
    cwd: new URL('../..', import.meta.url).pathname,
    env: { ...process.env, PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`instance did not start:\n${output}`)), 60_000);
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /Roster API on (http:\/\/[\d.:]+)/.exec(output);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('exit', (code) => reject(new Error(`instance exited with ${code}:\n${output}`)));
  });
  return { url, child };
};

const call = (instance: Instance, method: string, path: string, options: { token?: string; json?: unknown } = {}) =>
  callApi(instance.url, method, path, options);

let a: Instance;
let b: Instance;

beforeAll(async () => {
  [a, b] = await Promise.all([startInstance(), startInstance()]);
});

afterAll(async () => {
  for (const instance of [a, b]) {
    if (!instance || instance.child.exitCode !== null) continue;
    instance.child.kill('SIGINT');
    await once(instance.child, 'exit');
  }
});

const signUp = async (instance: Instance) => {
  const email = `multi-${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}@example.com`;
  const res = await call(instance, 'POST', '/api/auth/signup', {
    json: { email, password: 'correct horse battery staple', firstName: 'M', lastName: 'P' },
  });
  expect(res.status).toBe(201);
  return { email, session: res.body.data?.session as { access_token: string; refresh_token: string } };
};

describe('two function instances on one table', () => {
  it('a token issued by one instance works on the other', async () => {
    const { session } = await signUp(a);
    expect((await call(b, 'GET', '/api/auth/user', { token: session.access_token })).status).toBe(200);
    const refreshed = await call(b, 'POST', '/api/auth/refresh', { json: { refresh_token: session.refresh_token } });
    expect(refreshed.status).toBe(200);
    expect((await call(a, 'GET', '/api/teams', { token: refreshed.body.data?.session?.access_token })).status).toBe(200);
  });

  it('sign-out on one instance bites on the other at once', async () => {
    const { session } = await signUp(a);
    expect((await call(a, 'GET', '/api/auth/user', { token: session.access_token })).status).toBe(200);
    expect((await call(b, 'POST', '/api/auth/signout', { token: session.access_token })).status).toBe(200);
    expect((await call(a, 'GET', '/api/auth/user', { token: session.access_token })).status).toBe(401);
    expect((await call(a, 'POST', '/api/auth/refresh', { json: { refresh_token: session.refresh_token } })).status).toBe(401);
  });

  it('shares the brute-force counters: failures on either instance add up', async () => {
    const { email } = await signUp(a);
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await call(i % 2 === 0 ? a : b, 'POST', '/api/auth/signin', { json: { email, password: 'not the password' } });
      statuses.push(res.status);
    }
    // Five failures are let through (three on one instance, two on the other); the sixth waits.
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429]);
  });
});
