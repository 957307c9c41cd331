import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const source = (path: string) => fileURLToPath(new URL(`./src/${path}`, import.meta.url));

export default defineConfig({
  resolve: {
    // The same mapping as tsconfig.json's `paths`: tests run against the sources, not dist/.
    alias: [
      { find: /^proceedjs$/, replacement: source('index.ts') },
      { find: /^proceedjs\/([a-z]+)$/, replacement: source('$1/index.ts') },
    ],
  },
  test: {
    include: [
      'src/**/*.test.ts',
      'test/**/*.test.ts',
      'examples/*/src/**/*.test.ts',
      'examples/*/test/**/*.test.ts',
      'packages/*/src/**/*.test.ts',
      'packages/create-proceed/template/src/**/*.test.ts',
    ],
    globalSetup: ['./test/services.global.ts'],
    testTimeout: 20_000,
    hookTimeout: 60_000,
  },
});
