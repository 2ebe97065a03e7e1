import { defineConfig } from 'vitest/config';

/**
 * The load tests: thousands of items or hundreds of concurrent requests on the one DynamoDB Local
 * every file shares. Run beside the other files on two cores they starve them (and themselves) of
 * the emulator; so they run after the rest, one file at a time.
 */
const LOAD = [
  'test/api/team-cleanup.test.ts',
  'test/api/races.test.ts',
  'test/api/limits.test.ts',
  'test/api/invite-sweep.test.ts',
  'test/api/scale.test.ts',
];

export default defineConfig({
  test: {
    globalSetup: ['test/global-setup.ts'],
    setupFiles: ['test/setup.ts'],
    // Each file gets its own process, table and local server.
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 120_000,
    projects: [
      // The files run side by side...
      { extends: true, test: { name: 'api', include: ['test/**/*.test.ts'], exclude: LOAD, sequence: { groupOrder: 0 } } },
      // ...then the load tests, one after another.
      { extends: true, test: { name: 'load', include: LOAD, fileParallelism: false, sequence: { groupOrder: 1 } } },
    ],
  },
});
