/**
 * The versions a new app starts with: those Proceed itself is built and tested with. A test in
 * the Proceed repository keeps them in step with its own package.json (and the blog example's).
 */
export const dependencyVersions = { zod: '^4.6.7' } as const;

export const devDependencyVersions = {
  '@types/node': '^20.19.43',
  'pino-pretty': '^13.2.0',
  tsx: '^4.23.15',
  typescript: '^5.9.3',
  vitest: '^4.1.12',
} as const;

/** What the app template (the default) adds: its database, as the blog example has it. */
export const appDependencyVersions = {
  '@electric-sql/pglite': '^0.5.16',
  'drizzle-orm': '^0.45.4',
  pg: '^8.23.1',
} as const;

/**
 * The app template's development tools. drizzle-kit writes migrations from the schema; Proceed's
 * repository does not use it, so its version is the one the template's migrations were made with.
 */
export const appDevDependencyVersions = { '@types/pg': '^8.23.1', 'drizzle-kit': '^0.31.11' } as const;

/**
 * The runtimes an app can be scaffolded for besides Node.js, from their npm packages: Bun, Deno,
 * and Wrangler for Cloudflare Workers (4.86 is the last release that runs on Node.js 20).
 */
export const runtimeVersions = { bun: '^1.4.5', deno: '^2.9.6', wrangler: '4.86.0' } as const;
