import { withoutHidden } from '#lib/core/text.ts';

/**
 * The header-injection rule (docs/mail.md): user text is made one line when a message is rendered,
 * and every transport refuses a message whose recipient, subject or id could still break a header.
 * The check runs in our code before any transport library sees the message, so it does not depend
 * on how nodemailer or SES would encode a line break.
 */

/**
 * Characters that end or disguise a line: C0 controls (CR, LF, TAB, NUL …), DEL, C1 controls (NEL),
 * the Unicode line and paragraph separators, and the bidirectional overrides that reorder text.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/u;
// eslint-disable-next-line no-control-regex -- as above, every occurrence
const UNSAFE_ALL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/gu;

/** A refused message: permanent, retrying cannot help (the outbox should not retry it). */
export class MailRefusedError extends Error {
  override readonly name = 'MailRefusedError';
}

export const hasUnsafeCharacters = (value: string): boolean => UNSAFE.test(value);

/**
 * User text for a message: hidden characters removed (lib/core/text.ts, the rule names are held to:
 * `Payroll \u202Egnp.exe` would show as `Payroll exe.png`; names stored before that rule may still
 * hold them), every other unsafe character (a line break, a control) becomes a space, runs of
 * space collapse.
 */
export const oneLine = (value: string): string => withoutHidden(value).replace(UNSAFE_ALL, ' ').replace(/\s+/gu, ' ').trim();

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const escapeHtml = (value: string): string => value.replace(/[&<>"']/gu, (c) => HTML_ESCAPES[c] ?? c);

/** One bare address: no display name, no list, no quoting, no comments, no whitespace. */
const PLAIN_ADDRESS = /^[^\s@<>()[\]\\,;:"]+@[^\s@<>()[\]\\,;:"]+$/u;
export const isPlainAddress = (value: string): boolean => value.length <= 254 && PLAIN_ADDRESS.test(value) && !hasUnsafeCharacters(value);

/** RFC 5322 dot-atom text: what may stand left of the `@` in a Message-ID. */
const DOT_ATOM = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/u;

export interface MailMessage {
  /** One bare address. */
  to: string;
  /** One line. */
  subject: string;
  text: string;
  html: string;
  /** Stable id of this message (e.g. the outbox record's): dot-atom text, at most 200 characters. */
  messageId: string;
  /**
   * The one-click link that stops mail like this one (invitations, nominations): sent as RFC 8058's
   * `List-Unsubscribe` and `List-Unsubscribe-Post` headers. An http(s) URL on one line.
   */
  unsubscribe?: string;
}

/** Throws MailRefusedError unless the message's header fields are safe; the error never echoes them. */
export const checkMessage = (message: MailMessage): MailMessage => {
  const { to, subject, text, html, messageId } = message;
  if (typeof to !== 'string' || !isPlainAddress(to)) throw new MailRefusedError('recipient is not one plain e-mail address');
  if (typeof subject !== 'string' || subject.trim() === '' || subject.length > 500 || hasUnsafeCharacters(subject)) {
    throw new MailRefusedError('subject must be one non-empty line of at most 500 characters');
  }
  if (typeof messageId !== 'string' || messageId.length > 200 || !DOT_ATOM.test(messageId)) {
    throw new MailRefusedError('messageId must be dot-atom text of at most 200 characters');
  }
  if (typeof text !== 'string' || typeof html !== 'string') throw new MailRefusedError('text and html must be strings');
  const { unsubscribe } = message;
  if (
    unsubscribe !== undefined &&
    (typeof unsubscribe !== 'string' || unsubscribe.length > 2000 || !/^https?:\/\/[^\s<>"]+$/u.test(unsubscribe))
  ) {
    throw new MailRefusedError('the unsubscribe link must be one http(s) URL');
  }
  return { to, subject, text, html, messageId, ...(unsubscribe === undefined ? {} : { unsubscribe }) };
};

export interface Sender {
  name: string;
  address: string;
}

/** MAIL_FROM: `addr@example.com` or `Display Name <addr@example.com>`. Throws on anything else. */
export const parseSender = (from: string): Sender => {
  const match = /^\s*(?:(.*?)\s*<([^<>]*)>|([^<>]*?))\s*$/su.exec(from);
  const raw = match?.[1] ?? '';
  // A quoted display name loses its quotes and backslash escapes: the transports quote it again.
  const quoted = /^"(.*)"$/su.exec(raw);
  const name = quoted ? (quoted[1] ?? '').replace(/\\(.)/gsu, '$1') : raw;
  const address = match?.[2] ?? match?.[3] ?? '';
  if (hasUnsafeCharacters(name) || !isPlainAddress(address))
    throw new Error('MAIL_FROM must be an address or "Name <address>" on one line');
  return { name, address };
};

/** The Message-ID header value: the stable id at the sender's domain. */
export const messageIdHeader = (messageId: string, sender: Sender): string =>
  `<${messageId}@${sender.address.slice(sender.address.lastIndexOf('@') + 1)}>`;

/** RFC 8058's headers for a message's one-click unsubscribe link (none without one). */
export const unsubscribeHeaders = (message: Pick<MailMessage, 'unsubscribe'>): Record<string, string> =>
  message.unsubscribe === undefined
    ? {}
    : { 'List-Unsubscribe': `<${message.unsubscribe}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' };
