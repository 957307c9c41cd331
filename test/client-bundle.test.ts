/**
 * `proceedjs/client` runs in browsers: bundled as an app's front end bundles it, with
 * `routeManifest` beside `createClient`, it holds no schema library and no server code
 * (the manifest asks each procedure how it takes files rather than reading its schema).
 */
import { join } from 'node:path';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { root } from './processes.js';

describe('the typed client in a browser bundle', () => {
  it('holds no schema library or server module, routeManifest included', async () => {
    const bundled = await build({
      stdin: {
        contents: "export { createClient, routeManifest } from './dist/client/index.js';",
        resolveDir: root,
        loader: 'js',
      },
      bundle: true,
      platform: 'browser',
      format: 'esm',
      write: false,
      metafile: true,
      logLevel: 'silent',
    });
    const inputs = Object.keys(bundled.metafile.inputs);
    expect(
      inputs.filter((path) => /node_modules\/(zod|fast-json-stringify|pino|fastify)\//.test(path)),
    ).toEqual([]);
    expect(inputs.filter((path) => /dist\/(server|http|core\/schema)/.test(path))).toEqual([]);
    expect(inputs.some((path) => path.startsWith(join('dist', 'client')))).toBe(true);
  });
});
