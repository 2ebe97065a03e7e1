/**
 * `npm run outbox:redrive -- --older-than 15`: delivers now every outbox message still unfinished
 * (PENDING, or SENDING past its lease) whose due time is more than N minutes (default 15) old:
 * what the scheduled sweeper does each minute after OUTBOX_SWEEP_GRACE_MS, through the same code
 * (lib/mail/outbox-sweep.ts), for when it was off or to see each message's outcome. Prints one
 * line per message and a summary; exits 1 if a delivery failed (run it again). docs/operations.md
 * says when to run it. Locally: DYNAMODB_ENDPOINT and TABLE_NAME as for the server. Against the
 * deployed table: no DYNAMODB_ENDPOINT, AWS credentials, and the mailer's settings (below).
 */
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { 'older-than': { type: 'string', default: '15' } } });
const minutes = Number(values['older-than']);
if (!Number.isFinite(minutes) || minutes < 0) {
  console.error('--older-than takes a number of minutes, e.g. --older-than 15');
  process.exit(2);
}
if (!process.env.DYNAMODB_ENDPOINT) {
  // The deployed table: the mail must go out as the mailer would send it, so nothing is left to defaults.
  const missing = ['TABLE_NAME', 'MAIL_TRANSPORT', 'MAIL_FROM', 'PUBLIC_URL'].filter((name) => !process.env[name]);
  if (missing.length > 0) {
    console.error(
      `DYNAMODB_ENDPOINT is not set, so this would run against DynamoDB in AWS_REGION; set ${missing.join(', ')} as the ` +
        'stack sets them for the mailer (stack outputs; docs/operations.md), or set DYNAMODB_ENDPOINT for DynamoDB Local.',
    );
    process.exit(2);
  }
}

// stdout is this report: the library's JSON log and metric lines go to stderr.
const out = process.stdout.write.bind(process.stdout);
const report = (line: string) => out(`${line}\n`);
process.stdout.write = process.stderr.write.bind(process.stderr) as typeof process.stdout.write;

// Imported only now: the modules read the environment when they load.
const { config } = await import('#lib/core/config.ts');
const { db } = await import('#lib/db/service.ts');
const { sweepOutbox } = await import('#lib/mail/outbox-sweep.ts');
const { createMailer } = await import('#lib/mail/transports.ts');

const mailer = createMailer();
const result = await sweepOutbox(db(), mailer, new Date(), {
  olderThanMs: minutes * 60_000,
  mayGoOn: () => true,
  onMessage: (m, r) => {
    const what =
      'error' in r ? `error: ${r.error instanceof Error ? `${r.error.name}: ${r.error.message}` : String(r.error)}` : r.delivery.outcome;
    const why = 'delivery' in r && 'reason' in r.delivery ? ` (${r.delivery.reason})` : '';
    report(`${m.messageId}  ${m.kind}  ${m.status} due ${m.dueAt ?? '?'}, ${m.attempts ?? 0} attempt(s) before  →  ${what}${why}`);
  },
});
const o = result.outcomes;
report(
  `${result.found} message(s) of table ${config.tableName} unfinished for more than ${minutes} minute(s), transport ${mailer.kind}: ` +
    `${o.sent} sent, ${o['sent-unrecorded']} sent but not recorded, ${o.failed} failed (never sent), ${o.unconfirmed} not sent again (unconfirmed), ` +
    `${o.leased} held by another mailer, ${o['done-before']} done before, ${o.error} error(s) (${result.queries} queries).`,
);
process.exit(o.error > 0 ? 1 : 0);
