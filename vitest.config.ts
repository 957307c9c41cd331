import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: { conditions: ['source', 'module', 'node', 'default'] },
  ssr: { resolve: { conditions: ['source', 'module', 'node', 'default'] } },
  test: {
    include: [
      'src/**/*.test.ts',
      'test/**/*.test.ts',
      'examples/*/src/**/*.test.ts',
      'examples/*/test/**/*.test.ts',
    ],
    globalSetup: ['./test/services.global.ts'],
    testTimeout: 20_000,
    hookTimeout: 60_000,
  },
});
