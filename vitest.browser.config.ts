import { defineConfig } from 'vitest/config';

/**
 * `npm run test:browser`: pages rendered in headless Chromium (browser/), apart from `npm test`
 * because they need Chromium installed. Same DynamoDB Local and per-file setup as the API tests.
 */
export default defineConfig({
  test: {
    include: ['browser/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    setupFiles: ['test/setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
