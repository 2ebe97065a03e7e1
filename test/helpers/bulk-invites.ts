import { expect } from 'vitest';
import type { Api, TestUser } from './api.ts';
import { freshEmail } from './api.ts';

/** POST /api/teams/{slug}/invites/bulk and its single twin, and what they leave behind (test/api and test/load bulk-invite files). */
export const bulkInvites = (api: Api) => {
  const bulk = (by: TestUser, slug: string, invites: unknown, headers: Record<string, string> = {}) =>
    api.call('POST', `/api/teams/${slug}/invites/bulk`, { token: by.token, json: { invites }, headers });

  const single = (by: TestUser, slug: string, body: unknown) =>
    api.call('POST', `/api/teams/${slug}/invites`, { token: by.token, json: body });

  const pendingOf = async (by: TestUser, slug: string): Promise<Listed[]> => {
    const res = await api.call('GET', `/api/teams/${slug}/invites?limit=1000`, { token: by.token });
    expect(res.status).toBe(200);
    return res.body.data;
  };
  return { bulk, single, pendingOf };
};

export interface Listed {
  id: number;
  uuid: string;
  email: string;
  role: string;
}

/** Invitation e-mails queued (outbox messages) for these invites, by invite UUID. */
export const mailsFor = async (uuids: readonly string[]): Promise<Map<string, number>> => {
  const d = (await import('#lib/db/service.ts')).db();
  const { data } = await d.entities.outboxMessage.scan.where((a, op) => op.eq(a.kind, 'invitation')).go({ pages: 'all' });
  const counts = new Map(uuids.map((u) => [u, 0]));
  for (const m of data) if (m.inviteUuid && counts.has(m.inviteUuid)) counts.set(m.inviteUuid, (counts.get(m.inviteUuid) ?? 0) + 1);
  return counts;
};

export const rows = (count: number, role = 'MEMBER') => Array.from({ length: count }, () => ({ email: freshEmail('bulk'), role }));
