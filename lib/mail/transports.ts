import { SendEmailCommand, type SendEmailCommandInput, SESv2Client } from '@aws-sdk/client-sesv2';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { createTransport } from 'nodemailer';
import { config } from '#lib/core/config.ts';
import { log } from '#lib/core/log.ts';
import { checkMessage, type MailMessage, messageIdHeader, parseSender, type Sender, unsubscribeHeaders } from './safety.ts';

export { MailRefusedError, type MailMessage } from './safety.ts';

/**
 * One way to send, three transports (docs/mail.md). Every send first passes checkMessage(), which
 * throws MailRefusedError for a recipient, subject or id that could break a header; only then does
 * a transport library see the message.
 */
export interface Mailer {
  readonly kind: 'smtp' | 'ses' | 'log';
  /** The longest one send may take before it fails: a claim must have this much lease left to send (lib/mail/outbox.ts). */
  readonly maxSendMs: number;
  send(message: MailMessage): Promise<void>;
}

/** One SES send, its SDK attempts (2 of 1 s to connect and 5 s to answer) and their backoff included, is cut off at this. */
const SES_SEND_TIMEOUT_MS = 12_000;

export interface MailSettings {
  /** `smtp`, `ses`, `log`, or undefined: `smtp` when smtpUrl is set, else `log`. */
  transport: string | undefined;
  from: string;
  smtpUrl: string | undefined;
  smtpTimeoutMs: number;
  smtpSendTimeoutMs: number;
  region: string;
  /** SES only: the configuration set to send through (SES_CONFIGURATION_SET). */
  configurationSet?: string | undefined;
  /**
   * Log only: write the links' tokens as they are. Only locally (a DynamoDB Local endpoint is set),
   * where following a logged link is how one confirms an address; deployed without SES, whoever
   * reads the mailer's log must not be able to reset any account's password with them.
   */
  revealTokens?: boolean;
}

export const mailSettings: MailSettings = {
  transport: config.mailTransport,
  from: config.mailFrom,
  smtpUrl: config.smtpUrl,
  smtpTimeoutMs: config.smtpTimeoutMs,
  smtpSendTimeoutMs: config.smtpSendTimeoutMs,
  region: config.region,
  configurationSet: config.sesConfigurationSet,
  revealTokens: config.dynamodbEndpoint !== undefined,
};

/** The mailer the settings choose; throws on an unknown transport or `smtp` without SMTP_URL. */
export const createMailer = (settings: MailSettings = mailSettings): Mailer => {
  const kind = settings.transport ?? (settings.smtpUrl ? 'smtp' : 'log');
  if (kind === 'smtp') return smtpMailer(settings);
  if (kind === 'ses') return sesMailer(settings);
  if (kind === 'log') return logMailer(settings);
  throw new Error('MAIL_TRANSPORT must be smtp, ses or log');
};

/**
 * nodemailer over SMTP_URL. Each phase (connect, greeting, any silence) is bounded by smtpTimeoutMs
 * and the whole send by smtpSendTimeoutMs, so a hung server fails the send instead of the function.
 * The deadline aborts the send (nodemailer's `signal`: the connection is closed), not only the
 * wait for it: a send the mailer gave up on does not go on in the background and deliver after
 * the outbox lease has let another attempt send the message again. Only a server that has taken
 * the whole message and not yet answered may still deliver it.
 * The envelope is set explicitly: the server is told exactly one recipient, whatever the headers say.
 */
export const smtpMailer = (settings: Pick<MailSettings, 'from' | 'smtpUrl' | 'smtpTimeoutMs' | 'smtpSendTimeoutMs'>): Mailer => {
  if (!settings.smtpUrl) throw new Error('the smtp transport needs SMTP_URL');
  const sender = parseSender(settings.from);
  const transporter = createTransport({
    url: settings.smtpUrl,
    connectionTimeout: settings.smtpTimeoutMs,
    greetingTimeout: settings.smtpTimeoutMs,
    socketTimeout: settings.smtpTimeoutMs,
    disableFileAccess: true,
    disableUrlAccess: true,
  });
  return {
    kind: 'smtp',
    maxSendMs: settings.smtpSendTimeoutMs,
    send: async (message) => {
      const m = checkMessage(message);
      const deadline = AbortSignal.timeout(settings.smtpSendTimeoutMs);
      const sending = transporter.sendMail({
        from: sender,
        to: { name: '', address: m.to },
        envelope: { from: sender.address, to: [m.to] },
        subject: m.subject,
        text: m.text,
        html: m.html,
        messageId: messageIdHeader(m.messageId, sender),
        headers: unsubscribeHeaders(m),
        signal: deadline,
      });
      await sending.catch((error: unknown) => {
        throw deadline.aborted ? new Error(`SMTP send took longer than ${settings.smtpSendTimeoutMs} ms`, { cause: error }) : error;
      });
    },
  };
};

/** A display name as SES wants it: quoted ASCII, or an RFC 2047 encoded word. */
const sesFrom = ({ name, address }: Sender): string => {
  if (name === '') return address;
  const display = /^[\u0020-\u007e]*$/u.test(name)
    ? `"${name.replace(/["\\]/gu, '\\$&')}"`
    : `=?UTF-8?B?${Buffer.from(name, 'utf8').toString('base64')}?=`;
  return `${display} <${address}>`;
};

/**
 * The SESv2 SendEmail input of a message. SES replaces any Message-ID with its own, so the stable id
 * travels in `X-Roster-Message-Id` (same `<id@domain>` value the SMTP transport uses as Message-ID).
 */
export const sesSendEmailInput = (message: MailMessage, from: string, configurationSet?: string): SendEmailCommandInput => {
  const m = checkMessage(message);
  const sender = parseSender(from);
  const utf8 = (Data: string) => ({ Data, Charset: 'UTF-8' });
  return {
    FromEmailAddress: sesFrom(sender),
    Destination: { ToAddresses: [m.to] },
    Content: {
      Simple: {
        Subject: utf8(m.subject),
        Body: { Text: utf8(m.text), Html: utf8(m.html) },
        Headers: [
          { Name: 'X-Roster-Message-Id', Value: messageIdHeader(m.messageId, sender) },
          ...Object.entries(unsubscribeHeaders(m)).map(([Name, Value]) => ({ Name, Value })),
        ],
      },
    },
    // Without it SES sends outside the set, and bounces and complaints never come back.
    ...(configurationSet ? { ConfigurationSetName: configurationSet } : {}),
  };
};

/** Amazon SES (SESv2 SendEmail) from MAIL_FROM; the stack grants the send on that identity. */
export const sesMailer = (
  settings: Pick<MailSettings, 'from' | 'region' | 'configurationSet'>,
  client = new SESv2Client({
    region: settings.region,
    // Two attempts: a send that fails is handed back to the mail queue, which tries again within seconds.
    maxAttempts: 2,
    requestHandler: new NodeHttpHandler({ connectionTimeout: 1000, requestTimeout: 5000, throwOnRequestTimeout: true }),
  }),
): Mailer => {
  parseSender(settings.from);
  return {
    kind: 'ses',
    maxSendMs: SES_SEND_TIMEOUT_MS,
    send: async (message) => {
      const input = sesSendEmailInput(message, settings.from, settings.configurationSet);
      await client.send(new SendEmailCommand(input), { abortSignal: AbortSignal.timeout(SES_SEND_TIMEOUT_MS) });
    },
  };
};

const LINKS = /https?:\/\/[^\s<>"]+/gu;

/** A link's `token=` value replaced by `…` (the rest of the link stays readable). */
const maskToken = (link: string): string => link.replace(/([?&]token=)[^&#]+/gu, '$1…');

/** The local default: nothing is sent; the log line shows who would get what, with its links. */
export const logMailer = (settings: Pick<MailSettings, 'from' | 'revealTokens'>): Mailer => {
  const sender = parseSender(settings.from);
  const shown = (links: string[]): string[] => (settings.revealTokens ? links : links.map(maskToken));
  return {
    kind: 'log',
    maxSendMs: 0,
    send: async (message) => {
      const m = checkMessage(message);
      log.info('mail (log transport, not sent)', {
        to: m.to,
        subject: m.subject,
        messageId: messageIdHeader(m.messageId, sender),
        links: shown(m.text.match(LINKS) ?? []),
        ...(m.unsubscribe === undefined ? {} : { listUnsubscribe: shown([m.unsubscribe])[0] }),
      });
    },
  };
};
