import { defineConfig } from 'vitest/config';

/**
 * `npm run test:browser`: pages rendered in headless Chromium (browser/), apart from `npm test`
 * because they need Chromium installed. The same per-file setup as the API tests: a DynamoDB Local of its own.
 */
export default defineConfig({
  test: {
    include: ['browser/**/*.test.ts'],
    setupFiles: ['test/setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
