import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Request logs would drown the test report; LOG_LEVEL=info npm test shows them.
    env: { LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent' },
    // Each suite starts a database (PGlite takes a few seconds), and hashes passwords.
    hookTimeout: 60_000,
    testTimeout: 30_000,
  },
});
