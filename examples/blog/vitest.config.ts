import { defineConfig } from 'vitest/config';

/**
 * The blog's suites on their own (`npm test` here, or in a copy of the blog): against the
 * installed `proceedjs`. Inside Proceed's repository the root's `npm test` runs them too, against
 * the framework's sources and again on Bun and Deno.
 */
export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    globalSetup: ['./test/services.global.ts'],
    setupFiles: ['./test/kill-launched.setup.ts'],
    maxWorkers: 2,
    // Suites start databases, servers and child processes: sized for a busy machine.
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
