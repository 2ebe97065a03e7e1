/**
 * One cold start, in a fresh process (bench/cold-start.ts spawns it): import a bundle, then call
 * its handler once with the event in the given file. Prints one line, `COLD {json}`, and exits at
 * once, as a frozen Lambda instance would not run its timers on.
 *   node bench/cold-runner.mjs <bundle.mjs> [event.json]
 * Plain JavaScript on purpose: stripping types would add about 150 ms to each of some 500 spawns.
 */
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import process from 'node:process';
import { pathToFileURL } from 'node:url';

const [bundle, eventFile] = process.argv.slice(2);
if (!bundle) throw new Error('usage: cold-runner.mjs <bundle.mjs> [event.json]');
const event = eventFile ? JSON.parse(readFileSync(eventFile, 'utf8')) : undefined;
const deadline = Date.now() + 10_000;
const context = {
  callbackWaitsForEmptyEventLoop: false,
  functionName: 'roster-bench',
  functionVersion: '$LATEST',
  invokedFunctionArn: 'arn:aws:lambda:local:000000000000:function:roster-bench',
  memoryLimitInMB: '1024',
  awsRequestId: 'cold-start',
  logGroupName: '/aws/lambda/roster-bench',
  logStreamName: 'local',
  getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
};

const started = performance.now();
const { handler } = await import(pathToFileURL(bundle).href);
const imported = performance.now();
const result = event === undefined ? undefined : await handler(event, context);
const invoked = performance.now();

/** What a call answered: the HTTP status, or for the mailer how many records failed. */
const outcome = (value) => {
  if (value === undefined) return 'not invoked';
  if (value.statusCode !== undefined) return String(value.statusCode);
  if (value.batchItemFailures !== undefined) return `${value.batchItemFailures.length} failed`;
  return 'ok';
};

const line = { importMs: imported - started, invokeMs: event === undefined ? null : invoked - imported, status: outcome(result) };
process.stdout.write(`COLD ${JSON.stringify(line)}\n`, () => process.exit(0));
