import { defineConfig } from 'vitest/config';

/**
 * The test tiers (README "Tests"). `npm test` runs the first three, side by side:
 * - unit: pure code, no DynamoDB and no server (test/setup-unit.ts points the client at a closed port);
 * - api: the handlers through the local server, each file on a DynamoDB Local of its own;
 * - infra: the synthesized templates, no emulator.
 * `npm run test:load` runs the fourth, one file at a time: load, races, outages, large data and
 * the full bundling of every function.
 */
export default defineConfig({
  test: {
    // Each file gets its own process: its own settings (read from the environment once), table and server.
    pool: 'forks',
    // Vitest's default is one worker fewer than the cores: one at a time on two cores. A file spends
    // much of its time waiting on its DynamoDB Local (another process), so three side by side keep
    // both cores busy (measured on 2 cores, the api tier: 1 worker 6.0 min, 2: 3.7, 3: 3.4, 4: 3.6).
    maxWorkers: 3,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/unit/**/*.test.ts'], setupFiles: ['test/setup-unit.ts'] } },
      {
        extends: true,
        // test/status-coverage.ts: with TEST_STATUS_COVERAGE (npm test), every answer openapi.json declares must have been got.
        test: { name: 'api', include: ['test/api/**/*.test.ts'], setupFiles: ['test/setup.ts'], globalSetup: ['test/status-coverage.ts'] },
      },
      { extends: true, test: { name: 'infra', include: ['test/infra/**/*.test.ts'], setupFiles: ['test/setup-unit.ts'] } },
      {
        extends: true,
        test: {
          name: 'load',
          include: ['test/load/**/*.test.ts'],
          setupFiles: ['test/setup.ts'],
          // Hundreds of requests at once queue in this one process and one emulator on two cores (on
          // Lambda each would have its own instance, and DynamoDB's latency does not grow with the
          // queue): one file at a time, and patient timeouts. The SDK's connect timeout also runs while
          // a request waits for one of the client's 50 sockets, so it is as patient as the request's.
          // The races sign one address up 20 times at once: every try must reach the transaction's
          // condition, not stop at the address's mail allowance (tested on its own, in the api tier).
          fileParallelism: false,
          env: {
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
