/**
 * `npm run replay`: sends again what Roster's background gave up on (infra/dead-letters.ts;
 * docs/operations.md, "Replaying dead letters").
 *
 *   npm run replay -- --stack RosterData [--queues mail,cleanup,fanout]   the deployed data stack
 *   npm run replay -- --local [--wait 120]                                 DATA_DIR's dead letters
 *
 * Deployed: AWS credentials and AWS_REGION; the stream's dead letters are read back from the stream
 * and queued, and each named queue's dead letters moved back to it (default mail, cleanup and fanout;
 * add `webhook` to give failed webhook messages 8 more attempts). Locally: DYNAMODB_ENDPOINT,
 * TABLE_NAME and DATA_DIR as for `npm start`, and the mail settings it runs with; stop the server
 * first, or its stream poller and this both work on the same table (harmless: the work is idempotent).
 */
import { parseArgs } from 'node:util';
import { QUEUE_NAMES, type QueueName } from '#lib/events/queues.ts';

const { values } = parseArgs({
  options: {
    stack: { type: 'string' },
    queues: { type: 'string', default: 'mail,cleanup,fanout' },
    local: { type: 'boolean', default: false },
    wait: { type: 'string', default: '120' },
  },
});
const queues = (values.queues ?? '').split(',').filter(Boolean);
const unknown = queues.filter((q) => !(QUEUE_NAMES as readonly string[]).includes(q));
if (unknown.length > 0 || (!values.local && !values.stack)) {
  console.error(`usage: --stack <data stack name> [--queues ${QUEUE_NAMES.join(',')}] | --local [--wait seconds]`);
  process.exit(2);
}

// stdout is this report: the library's JSON log and metric lines go to stderr.
const out = process.stdout.write.bind(process.stdout);
const log = (line: string) => out(`${line}\n`);
process.stdout.write = process.stderr.write.bind(process.stderr) as typeof process.stdout.write;

if (values.local) {
  if (!process.env.DYNAMODB_ENDPOINT) {
    console.error('--local needs DYNAMODB_ENDPOINT (and TABLE_NAME, DATA_DIR) as `npm start` runs with');
    process.exit(2);
  }
  // Imported only now: the modules read the environment when they load.
  const { config } = await import('#lib/core/config.ts');
  const { replayLocal } = await import('#infra/dead-letters.ts');
  const { replayed, left } = await replayLocal({ dataDir: config.dataDir, waitMs: Number(values.wait) * 1000, log });
  log(`${replayed} dead letters sent again, ${left} written back`);
  process.exit(left > 0 ? 1 : 0);
}

const { CloudFormationClient } = await import('@aws-sdk/client-cloudformation');
const { DynamoDBStreamsClient } = await import('@aws-sdk/client-dynamodb-streams');
const { SQSClient } = await import('@aws-sdk/client-sqs');
const { findQueues, replayDeployed } = await import('#infra/dead-letters.ts');
const region = process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION;
if (!region) {
  console.error('set AWS_REGION to the region of the stack');
  process.exit(2);
}
const found = await findQueues(new CloudFormationClient({ region }), values.stack as string);
const report = await replayDeployed({
  sqs: new SQSClient({ region }),
  streams: new DynamoDBStreamsClient({ region }),
  found,
  region,
  queues: queues as QueueName[],
  log,
});
log(
  `${report.streamRecords} stream records of ${report.streamBatches} batches queued again, ${report.streamLeft} batches left; ` +
    `moving back: ${report.moved.join(', ') || 'nothing'}`,
);
process.exit(report.streamLeft > 0 ? 1 : 0);
