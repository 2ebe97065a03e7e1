import { relative } from 'node:path';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The load tests: thousands of items or hundreds of concurrent requests. Run beside the other files
 * on two cores they starve them (and themselves) of the emulator; so they run after the rest, one
 * file at a time, each on a DynamoDB Local of its own (test/setup.ts).
 */
const LOAD = [
  'test/api/races.test.ts',
  'test/api/limits.test.ts',
  'test/unit/limits.test.ts',
  'test/api/invite-sweep.test.ts',
  'test/api/scale.test.ts',
  // A 100-row bulk invite must answer within the function's timeout: timed, so alone.
  'test/api/bulk-invites.test.ts',
  // Bundles every function twice (asset hashes must not change between synths): minutes of CPU.
  'test/infra/rollout.test.ts',
  // Its own emulator, killed and hung under a continuous load of invitations for about three minutes.
  'test/api/outbox-outage.test.ts',
  // Last: 20,000 members and their 40,000 stream records (on an emulator of its own, as every load file).
  'test/api/team-cleanup.test.ts',
];

/** Vitest's own order, except that the load tests come in the order LOAD lists them. */
class LoadOrder extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (f: TestSpecification) => LOAD.indexOf(relative(process.cwd(), f.moduleId));
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}

export default defineConfig({
  test: {
    globalSetup: ['test/global-setup.ts'],
    setupFiles: ['test/setup.ts'],
    // Each file gets its own process, table and local server.
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 120_000,
    sequence: { sequencer: LoadOrder },
    projects: [
      // First the files side by side (group numbers start at 1: vitest runs a group 0 last)...
      { extends: true, test: { name: 'api', include: ['test/**/*.test.ts'], exclude: LOAD, sequence: { groupOrder: 1 } } },
      // ...then the load tests, one after another. Hundreds of requests at once queue in this one
      // process and one emulator on two cores (on Lambda each would have its own instance, and
      // DynamoDB's latency does not grow with the queue): they may take minutes, not fail for it.
      {
        extends: true,
        test: {
          name: 'load',
          include: LOAD,
          fileParallelism: false,
          sequence: { groupOrder: 2 },
          // The SDK's connect timeout also runs while a request waits for one of the client's 50
          // sockets, so with hundreds in flight it must be as patient as the request timeout.
          // The races sign one address up 20 times at once: every try must reach the transaction's
          // condition, not stop at the address's mail allowance (tested on its own, in the api project).
          env: {
            // Each on a fresh DynamoDB Local of its own (test/setup.ts).
            TEST_OWN_DYNAMODB: '1',
            LOCAL_FUNCTION_TIMEOUT_SECONDS: '300',
            DYNAMODB_CONNECT_TIMEOUT_MS: '60000',
            DYNAMODB_REQUEST_TIMEOUT_MS: '60000',
            ACCOUNT_MAILS_PER_ADDRESS_HOUR: '100000',
          },
        },
      },
    ],
  },
});
