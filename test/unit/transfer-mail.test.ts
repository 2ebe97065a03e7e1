/** lib/mail/transfer.ts: the e-mail that tells a member they were nominated as a team's owner. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkMessage } from '#lib/mail/safety.ts';
import { renderTransfer, type TransferData, transferEndpoint } from '#lib/mail/transfer.ts';

const ACCEPT = 'https://roster.example.com/api/teams/acme/transfer/accept';
const DECLINE = 'https://roster.example.com/api/teams/acme/transfer/decline';

const data = (over: Partial<TransferData> = {}): TransferData => ({
  to: 'grace@example.com',
  name: 'Grace Hopper',
  teamName: 'Acme',
  nominatorName: 'Ada Lovelace',
  nominatorEmail: 'ada@example.com',
  expiresAt: '2026-01-09T14:05:00.000Z',
  acceptUrl: ACCEPT,
  declineUrl: DECLINE,
  unsubscribe: 'https://roster.example.com/unsubscribe?token=stop',
  ...over,
});

describe('transfer e-mail', () => {
  it('names the endpoints from PUBLIC_URL and the team’s slug', () => {
    expect(transferEndpoint('acme', 'accept', 'https://roster.example.com/')).toBe(ACCEPT);
    expect(transferEndpoint('acme', 'decline', 'https://roster.example.com')).toBe(DECLINE);
  });

  it('says who proposes what, the roles after, the expiry and where to answer, in every part; the only link stops such mail', () => {
    const r = renderTransfer(data(), undefined);
    expect(r.subject).toBe('Ada Lovelace proposes to make you an owner of Acme on Roster');
    for (const part of [r.text, r.html]) {
      for (const s of ['Grace Hopper', 'Ada Lovelace', 'ada@example.com', 'Acme', 'Owner', 'Admin', 'Friday, 9 January 2026, 14:05 UTC']) {
        expect(part).toContain(s);
      }
      expect(part).toContain(`POST ${ACCEPT}`);
      expect(part).toContain(`POST ${DECLINE}`);
    }
    // A browser's GET of an API endpoint is a 405: the HTML names them, it does not link them. Its
    // one link is the recipient's "no more" (lib/mail/blocks.ts).
    expect([...r.html.matchAll(/href="([^"]*)"/gu)].map((m) => m[1])).toEqual(['https://roster.example.com/unsubscribe?token=stop']);
    expect(r.text).toContain('https://roster.example.com/unsubscribe?token=stop');
    expect(() => checkMessage({ to: 'grace@example.com', ...r, messageId: 'transfer.1' })).not.toThrow();
  });

  it('makes names one line, escapes them in the HTML, and falls back to the addresses when empty', () => {
    const r = renderTransfer(data({ nominatorName: 'Eve\r\nBcc: evil@example.com', teamName: '<b>A&B</b>', name: ' ' }), undefined);
    expect(r.subject).toBe('Eve Bcc: evil@example.com proposes to make you an owner of <b>A&B</b> on Roster');
    expect(r.html).toContain('&lt;b&gt;A&amp;B&lt;/b&gt;');
    expect(r.html).not.toContain('<b>A&B</b>');
    expect(r.text).toContain('Hello grace@example.com,');
    expect(renderTransfer(data({ nominatorName: '' }), undefined).subject).toBe(
      'ada@example.com proposes to make you an owner of Acme on Roster',
    );
  });

  it('refuses endpoints that are not http(s) and dates that are not dates', () => {
    expect(() => renderTransfer(data({ acceptUrl: 'javascript:alert(1)' }), undefined)).toThrow(/link/u);
    expect(() => renderTransfer(data({ expiresAt: 'soon' }), undefined)).toThrow(/date/u);
  });

  it('takes overrides from MAIL_TEMPLATE_DIR under the kind `transfer`, and refuses unknown placeholders', () => {
    const dir = mkdtempSync(join(tmpdir(), 'transfer-templates-'));
    writeFileSync(join(dir, 'transfer.subject.txt'), 'Be the owner of {{teamName}}?\n');
    expect(renderTransfer(data(), dir).subject).toBe('Be the owner of Acme?');
    expect(renderTransfer(data(), dir).text).toContain(`POST ${ACCEPT}`);
    const broken = mkdtempSync(join(tmpdir(), 'transfer-templates-'));
    writeFileSync(join(broken, 'transfer.txt'), '{{token}}');
    expect(() => renderTransfer(data(), broken)).toThrow(/unknown placeholder \{\{token\}\}/u);
  });
});
