import { defineConfig } from 'vitest/config';

export default defineConfig({
  // Request logs would drown the test report; LOG_LEVEL=info npm test shows them.
  test: { env: { LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent' } },
});
