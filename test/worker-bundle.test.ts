/**
 * What a Worker built on Proceed carries: wrangler bundles test/runtimes/bundle/worker.ts (one
 * procedure) as it would a user's, `proceedjs` resolved through the package's `workerd`
 * condition to the built `dist/index-fetch.js`, and the bundle holds no Fastify: not the
 * framework, its router, its plugin loader or its in-memory requests (docs/deployment.md,
 * "Cloudflare Workers"; the sizes are in docs/performance.md).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { root } from './processes.js';

const run = promisify(execFile);

/** Fastify and what only it uses: none of these may reach a Worker. */
const fastifyParts =
  /node_modules\/(?:fastify|find-my-way|light-my-request|avvio|@fastify\/(?!accept-negotiator\/|merge-json-schemas\/))/;

describe('a minimal Worker bundle', { timeout: 120_000 }, () => {
  it('resolves proceedjs to its Fetch entry and holds no Fastify', async () => {
    const out = mkdtempSync(join(tmpdir(), 'proceed-bundle-'));
    try {
      await run(
        join(root, 'node_modules/.bin/wrangler'),
        ['deploy', '--dry-run', '--minify', '--outdir', out, '--metafile', join(out, 'meta.json')],
        { cwd: join(root, 'test/runtimes/bundle'), env: { ...process.env, WRANGLER_SEND_METRICS: 'false' } },
      );
      const meta = JSON.parse(readFileSync(join(out, 'meta.json'), 'utf8')) as {
        inputs: Record<string, { bytes: number }>;
      };
      const inputs = Object.keys(meta.inputs);
      expect(inputs.filter((input) => input.endsWith('/dist/index-fetch.js'))).toHaveLength(1);
      expect(
        inputs.filter((input) => input.endsWith('/dist/index.js') && !input.includes('node_modules')),
      ).toEqual([]);
      expect(inputs.filter((input) => fastifyParts.test(input))).toEqual([]);
      expect(fastifyParts.test('../../../node_modules/fastify/lib/route.js')).toBe(true);
      expect(fastifyParts.test('../../../node_modules/@fastify/accept-negotiator/index.js')).toBe(false);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});
