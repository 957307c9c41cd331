import { fileURLToPath } from 'node:url';
import { configDefaults, defineConfig } from 'vitest/config';
import SlowFirstSequencer from './test/sequencer.js';

const source = (path: string) => fileURLToPath(new URL(`./src/${path}`, import.meta.url));

/**
 * The blog's suites that run again on Bun and Deno: what a request meets on the runtime. Left
 * out: the suites of its parts in this process, of what its Node process alone does (restarts,
 * the seed, the pool, queries, telemetry), the TanStack Query page (a browser's view of the API),
 * and openapi-tools, whose linters and generators read the document that openapi.test.ts checks
 * is the one a Node process serves, on every runtime.
 */
const blogSuitesOnRuntimes =
  'examples/blog/test/{attachments,auth,client,cors,cors.browser,docs.browser,events,hostile,http-cache,http,idempotency,live-reconnect,mcp,metrics,openapi,outage,posts,shared-limits,shutdown,users}.test.ts';

/**
 * Files that change what the whole process shares (a module replaced with `vi.mock`, `TMPDIR`
 * pointed at a directory the file removes, an app module's own data): each runs in a process of
 * its own. Every other file shares its worker's modules with the files before it
 * (`isolate: false`): importing the framework, Zod and Fastify afresh for each of 190 files was
 * about a tenth of the run's CPU (README.md, "Development").
 */
const needIsolation = [
  'src/auth/password.test.ts',
  'src/server/upload-content-missing.test.ts',
  'src/http/spool.test.ts',
  // The README tour and the minimal template's own tests import one app, notes and all.
  'test/readme.test.ts',
  'packages/create-proceed/template/src/**/*.test.ts',
];

export default defineConfig({
  resolve: {
    // The same mapping as tsconfig.json's `paths`: tests run against the sources, not dist/.
    alias: [
      { find: /^proceedjs$/, replacement: source('index.ts') },
      { find: /^proceedjs\/([a-z-]+)$/, replacement: source('$1/index.ts') },
    ],
  },
  test: {
    projects: [
      {
        extends: true,
        test: {
          name: 'node',
          include: [
            'src/**/*.test.ts',
            'test/**/*.test.ts',
            'examples/*/src/**/*.test.ts',
            'examples/*/test/**/*.test.ts',
            'packages/*/src/**/*.test.ts',
            'packages/create-proceed/template/src/**/*.test.ts',
          ],
          exclude: [...configDefaults.exclude, ...needIsolation],
          isolate: false,
        },
      },
      {
        extends: true,
        test: {
          name: 'node (isolated)',
          include: needIsolation,
          // Quiet as the template's own vitest.config.ts keeps its tests (its app logs each request).
          env: { LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent' },
        },
      },
      // The blog's end-to-end suites again, against the compiled blog on Bun and on Deno
      // (examples/blog/test/runtimes.ts): those of blogSuitesOnRuntimes.
      ...(['bun', 'deno'] as const).map((runtime) => ({
        extends: true as const,
        test: {
          name: `blog on ${runtime === 'bun' ? 'Bun' : 'Deno'}`,
          include: [blogSuitesOnRuntimes],
          env: { BLOG_RUNTIME: runtime },
          isolate: false,
        },
      })),
    ],
    globalSetup: ['./test/services.global.ts'],
    // Hooks every file needs, registered for each file (test/kill-launched.setup.ts says why).
    setupFiles: ['./test/kill-launched.setup.ts'],
    // Two files at a time, one per core of the machines this project is built on (Vitest's default
    // there is one). The run is bound by CPU: a third worker measured no faster (README.md).
    maxWorkers: 2,
    sequence: { sequencer: SlowFirstSequencer },
    // Timeouts sized for a busy machine (two CPU-bound processes beside the run): suites start
    // real databases, servers and child processes. A hung test still fails, only later.
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
