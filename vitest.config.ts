import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    setupFiles: ['test/setup.ts'],
    // Each file gets its own process, table and local server; the files run side by side.
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
