/** `proceed openapi`: the document the app serves, or one generated from its routes. */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { stringify } from 'yaml';
import { ProceedConfigError } from '../core/errors.js';
import { asyncApiOf, generateOpenApi, type OpenApiDocument } from '../openapi/index.js';

import type { App } from '../server/app.js';
import { resolveEntry } from './entry.js';
import { UsageError } from './errors.js';
import { lintOpenApi, reportLint } from './openapi-lint.js';
import { withApp, writeOutput } from './output.js';
import { commands, parseCommand } from './usage.js';

const operationMethods = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

interface PackageInfo {
  name?: string;
  version?: string;
}

/** The nearest package.json above the entry: the default title and version. */
function nearestPackage(start: string): PackageInfo {
  for (let directory = start; ; directory = dirname(directory)) {
    const file = join(directory, 'package.json');
    if (existsSync(file)) {
      try {
        return JSON.parse(readFileSync(file, 'utf8')) as PackageInfo;
      } catch {
        return {};
      }
    }
    if (dirname(directory) === directory) return {};
  }
}

function isDocument(value: unknown): value is OpenApiDocument {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { openapi?: unknown }).openapi === 'string'
  );
}

/**
 * The document the app serves at `{prefix}/docs/json` (the docs plugin's, or one a route of
 * `app.server` serves), if any: asked of `app.fetch`, which every app has on every runtime, then
 * of `app.inject` where the app has one, which alone reaches the routes of Fastify's own.
 */
async function servedDocument(app: App): Promise<OpenApiDocument | undefined> {
  await app.ready();
  const prefixes = [...new Set(app.mounts.map((mount) => mount.prefix))];
  for (const prefix of prefixes) {
    const body = await servedJson(app, `${prefix}/docs/json`);
    if (isDocument(body)) return body;
  }
  return undefined;
}

/** A GET's JSON answer, or undefined when it answers anything else. */
async function servedJson(app: App, path: string): Promise<unknown> {
  const response = await app.fetch(new Request(`http://localhost${path}`));
  if (response.status === 200) return response.json().catch(() => undefined);
  await response.body?.cancel();
  let injected: Awaited<ReturnType<App['inject']>>;
  try {
    injected = await app.inject({ method: 'GET', url: path });
  } catch (error) {
    // An app without the Fastify adapter (proceedjs/node, Bun, Deno) has no inject.
    if (error instanceof ProceedConfigError) return undefined;
    throw error;
  }
  if (injected.statusCode !== 200) return undefined;
  try {
    return injected.json();
  } catch {
    return undefined;
  }
}

/**
 * Runs `proceed openapi [entry] [--out FILE] [--title T] [--version V] [--format json|yaml] [--lint]`.
 *
 * @example
 * await openapiCommand(['--out', 'openapi.yaml']);
 */
export async function openapiCommand(args: readonly string[]): Promise<void> {
  const { values, entry } = parseCommand(commands.openapi, args);
  const format =
    values.format ?? (values.out !== undefined && /\.ya?ml$/i.test(values.out) ? 'yaml' : 'json');
  if (format !== 'json' && format !== 'yaml') {
    throw new UsageError(`--format must be json or yaml, got "${format}"`, commands.openapi.usage);
  }
  if (values.lint === true && values.out === undefined && values.format !== undefined) {
    throw new UsageError(
      '--lint prints findings, not the document: --format needs --out',
      commands.openapi.usage,
    );
  }
  const entryFile = resolveEntry(process.cwd(), entry);
  const document = await withApp('openapi', entryFile, async (app) => {
    const served = await servedDocument(app);
    const info = {
      ...(served?.info ?? {}),
      title: values.title ?? served?.info.title ?? nearestPackage(dirname(entryFile)).name ?? 'API',
      version:
        values.version ?? served?.info.version ?? nearestPackage(dirname(entryFile)).version ?? '0.0.0',
    };
    return served === undefined ? generateOpenApi({ app, info }) : { ...served, info };
  });
  if (values.asyncapi === true) {
    if (values.lint === true)
      throw new UsageError(
        '--lint checks the OpenAPI document: leave out --asyncapi',
        commands.openapi.usage,
      );
    const asyncapi = asyncApiOf(document);
    if (asyncapi === undefined)
      throw new UsageError(
        'The app has no WebSocket procedures: there is no AsyncAPI document',
        commands.openapi.usage,
      );
    const channels = Object.keys(asyncapi.channels).length;
    await writeOutput(
      serialized(asyncapi, format),
      values.out,
      `${channels} channel${channels === 1 ? '' : 's'}`,
    );
    return;
  }
  const text = serialized(document, format);
  const operations = Object.values(document.paths).reduce(
    (count, item) => count + Object.keys(item ?? {}).filter((key) => operationMethods.has(key)).length,
    0,
  );
  if (values.lint !== true || values.out !== undefined)
    await writeOutput(text, values.out, `${operations} operation${operations === 1 ? '' : 's'}`);
  if (values.lint === true) reportLint(await lintOpenApi(document, values.out ?? 'openapi.json'));
}

function serialized(document: object, format: 'json' | 'yaml'): string {
  return format === 'yaml'
    ? stringify(document, { aliasDuplicateObjects: false })
    : `${JSON.stringify(document, null, 2)}\n`;
}
