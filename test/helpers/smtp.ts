import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

/** One message as a real SMTP server received it: the envelope's recipients and the parsed parts. */
export interface Received {
  to: string[];
  subject: string;
  text: string;
  html: string;
  messageId: string;
}

/**
 * A real SMTP server (smtp-server) in the test process, on the port `port()` gives when started;
 * it can be stopped and started again to play a mail server that goes down and comes back.
 */
export const testSmtp = (port: () => number) => {
  const inbox: Received[] = [];
  let server: SMTPServer | undefined;
  const start = async (): Promise<void> => {
    const next = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onData(stream, session, callback) {
        simpleParser(stream)
          .then((mail) => {
            inbox.push({
              to: (session.envelope.rcptTo ?? []).map((r) => r.address),
              subject: mail.subject ?? '',
              text: mail.text ?? '',
              html: typeof mail.html === 'string' ? mail.html : '',
              messageId: mail.messageId ?? '',
            });
            callback();
          })
          .catch(callback);
      },
    });
    await new Promise<void>((resolve) => next.listen(port(), '127.0.0.1', resolve));
    server = next;
  };
  const stop = (): Promise<void> =>
    new Promise<void>((resolve) => {
      if (!server) return resolve();
      server.close(() => resolve());
      server = undefined;
    });
  return { inbox, start, stop };
};
