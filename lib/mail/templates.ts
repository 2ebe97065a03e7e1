import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { escapeHtml, hasUnsafeCharacters, oneLine } from './safety.ts';

/**
 * `{{name}}` templates. A message kind has three parts; with a template directory (MAIL_TEMPLATE_DIR)
 * each part present there as `<kind>.subject.txt`, `<kind>.txt` or `<kind>.html` replaces the
 * built-in one. Templates are checked when loaded (known placeholders only, a one-line subject) and
 * kept for the life of the process.
 */
export interface Parts {
  subject: string;
  text: string;
  html: string;
}

export interface Rendered {
  subject: string;
  text: string;
  html: string;
}

const PLACEHOLDER = /\{\{\s*([A-Za-z]+)\s*\}\}/gu;
const FILES: Record<keyof Parts, string> = { subject: 'subject.txt', text: 'txt', html: 'html' };
const cache = new Map<string, Parts>();

const check = (kind: string, names: readonly string[], parts: Parts): Parts => {
  for (const part of Object.keys(FILES) as (keyof Parts)[]) {
    for (const [, name] of parts[part].matchAll(PLACEHOLDER)) {
      if (!names.includes(name ?? '')) throw new Error(`${kind} ${part} template: unknown placeholder {{${name}}}`);
    }
  }
  if (hasUnsafeCharacters(parts.subject)) throw new Error(`${kind} subject template must be one line`);
  return parts;
};

export const loadTemplates = (kind: string, names: readonly string[], defaults: Parts, dir: string | undefined): Parts => {
  const key = `${dir ?? ''}\u0000${kind}`;
  const cached = cache.get(key);
  if (cached) return cached;
  if (dir !== undefined && !(existsSync(dir) && statSync(dir).isDirectory())) {
    throw new Error(`MAIL_TEMPLATE_DIR is not a directory: ${dir}`);
  }
  const read = (part: keyof Parts): string => {
    const file = dir === undefined ? undefined : join(dir, `${kind}.${FILES[part]}`);
    return file !== undefined && existsSync(file) ? readFileSync(file, 'utf8') : defaults[part];
  };
  // A subject file ends with a newline in most editors: that one is not part of the subject.
  const parts = check(kind, names, { subject: read('subject').replace(/\r?\n$/u, ''), text: read('text'), html: read('html') });
  cache.set(key, parts);
  return parts;
};

/**
 * Fills the parts in one pass (a value containing `{{…}}` stays literal). Values are made one line
 * everywhere, so no name can add a header or a line of its own to the text, and escaped in the HTML.
 */
export const fill = (parts: Parts, values: Record<string, string>): Rendered => {
  const safe = Object.fromEntries(Object.entries(values).map(([k, v]) => [k, oneLine(v)]));
  const apply = (template: string, encode: (v: string) => string) =>
    template.replace(PLACEHOLDER, (_, name: string) => encode(safe[name] ?? ''));
  return {
    subject: oneLine(apply(parts.subject, (v) => v)),
    text: apply(parts.text, (v) => v),
    html: apply(parts.html, escapeHtml),
  };
};

const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

/** `2026-01-09T14:05:00.000Z` -> `Friday, 9 January 2026, 14:05 UTC` (no locale data involved). */
export const humanUtc = (iso: string): string => {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) throw new Error('not an ISO date-time');
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${DAYS[d.getUTCDay()]}, ${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()}, ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())} UTC`;
};

/** How long a link works, for a reader: `60` -> `1 hour`, `1440` -> `24 hours`, `90` -> `90 minutes`. */
export const humanMinutes = (minutes: number): string => {
  if (!Number.isInteger(minutes) || minutes <= 0) throw new Error('a lifetime is a positive whole number of minutes');
  const [n, unit] = minutes % 60 === 0 ? [minutes / 60, 'hour'] : [minutes, 'minute'];
  return `${n} ${unit}${n === 1 ? '' : 's'}`;
};

/** `ADMIN` -> `Admin`. */
export const roleName = (role: string): string => role.charAt(0).toUpperCase() + role.slice(1).toLowerCase();
