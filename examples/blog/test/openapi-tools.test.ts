/**
 * The blog's OpenAPI document in the tools its users already have (docs/openapi.md, "Tools"):
 * the two linters pass it with no error and no warning, and the clients three generators write
 * from it compile under strict TypeScript, with the problem answers typed (a 404's `status` is
 * `404`, its `code` is `'NOT_FOUND'`). On Node only: on Bun and Deno, openapi.test.ts checks
 * that the document served there is this one.
 */
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createClient as heyApi } from '@hey-api/openapi-ts';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import spectralCore from '@stoplight/spectral-core';
import spectralParsers from '@stoplight/spectral-parsers';
import { oas } from '@stoplight/spectral-rulesets';
import openapiTS, { astToString } from 'openapi-typescript';
import { generate as orval } from 'orval';
import type { OpenApiDocument } from 'proceedjs/openapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines, useBlog } from './harness.js';

const [pglite] = engines();
if (pglite === undefined) throw new Error('No PGlite engine');

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const blogRoot = resolve(fileURLToPath(new URL('..', import.meta.url)));

async function redocly(document: OpenApiDocument): Promise<string[]> {
  const config = await createConfig({ extends: ['recommended'] });
  const problems = await lintFromString({
    source: JSON.stringify(document),
    absoluteRef: join(blogRoot, 'openapi.json'),
    config,
  });
  return problems.map(
    (problem) =>
      `${problem.severity} ${problem.ruleId}: ${problem.message} ${problem.location[0]?.pointer ?? ''}`,
  );
}

async function spectral(document: OpenApiDocument): Promise<string[]> {
  const linter = new spectralCore.Spectral();
  linter.setRuleset({ extends: [[oas as never, 'recommended']] });
  const results = await linter.run(
    new spectralCore.Document(JSON.stringify(document), spectralParsers.Json, join(blogRoot, 'openapi.json')),
  );
  return results.map(
    (result) => `${result.severity} ${result.code}: ${result.message} ${result.path.join('.')}`,
  );
}

/** Runs tsc on a project; returns its diagnostics, empty when it compiles. */
function compile(project: string): string {
  const run = spawnSync(process.execPath, [tsc, '-p', project], { encoding: 'utf8', timeout: 120_000 });
  return run.status === 0 ? '' : `${run.stdout}${run.stderr}` || `tsc exited with ${run.status}`;
}

/** The strict settings the scaffolder writes, for a browser or Node project that imports a generated client. */
function tsconfig(include: string[], exactOptionalPropertyTypes: boolean): string {
  return JSON.stringify({
    compilerOptions: {
      target: 'ES2022',
      lib: ['ES2023', 'DOM', 'DOM.Iterable'],
      module: 'ESNext',
      moduleResolution: 'Bundler',
      strict: true,
      noUncheckedIndexedAccess: true,
      exactOptionalPropertyTypes,
      noImplicitOverride: true,
      isolatedModules: true,
      verbatimModuleSyntax: true,
      skipLibCheck: true,
      noEmit: true,
      types: [],
    },
    include,
  });
}

/** Code a user writes against each generated client: a typed success and a typed problem. */
const usage = {
  'use-orval.ts': `import { getPost } from './orval/blog';
export async function titleOf(id: string): Promise<string | undefined> {
  const answer = await getPost(id);
  if (answer.status === 200) return answer.data.title;
  if (answer.status === 404) {
    const status: 404 = answer.data.status;
    const code: 'NOT_FOUND' = answer.data.code;
    return \`\${status} \${code}\`;
  }
  return undefined;
}
`,
  'use-openapi-typescript.ts': `import createClient from 'openapi-fetch';
import type { paths } from './openapi-typescript';
const client = createClient<paths>({ baseUrl: 'http://127.0.0.1:3030' });
export async function titleOf(id: string): Promise<string> {
  const { data, error } = await client.GET('/api/posts/{id}', { params: { path: { id } } });
  if (error !== undefined) return error.code;
  return data.title;
}
export async function create(token: string): Promise<string | undefined> {
  const { data } = await client.POST('/api/posts', {
    headers: { Authorization: \`Bearer \${token}\` },
    body: { title: 'Notes', content: 'Text' },
  });
  return data?.id;
}
// openapi-typescript types a binary field as a string (its convention): the form is built by hand.
export async function attach(token: string, postId: string, file: File): Promise<string | undefined> {
  const { data } = await client.POST('/api/posts/{id}/attachments', {
    params: { path: { id: postId } },
    headers: { Authorization: \`Bearer \${token}\` },
    body: { file: file.name },
    bodySerializer: () => {
      const form = new FormData();
      form.append('file', file);
      return form;
    },
  });
  const size: number | undefined = data?.size;
  return size === undefined ? undefined : data?.id;
}
export async function fetchAttachment(postId: string, attachmentId: string): Promise<Blob | undefined> {
  const { data } = await client.GET('/api/posts/{id}/attachments/{attachmentId}', {
    params: { path: { id: postId, attachmentId } },
    parseAs: 'blob',
  });
  return data;
}
`,
  'use-hey-api.ts': `import { getPost } from './hey-api';
export async function titleOf(id: string): Promise<string | undefined> {
  const { data, error } = await getPost({ path: { id } });
  if (error !== undefined) return error.code;
  return data?.title;
}
`,
};

describe('the blog’s OpenAPI document in the tools users have', () => {
  const blog = useBlog(pglite);
  let directory = '';

  beforeAll(async () => {
    // Inside node_modules, so that the generated code and the usage files resolve openapi-fetch.
    const cache = join(blogRoot, 'node_modules', '.cache');
    await mkdir(cache, { recursive: true });
    directory = await mkdtemp(join(cache, 'openapi-clients-'));
  });

  afterAll(async () => {
    if (directory !== '') await rm(directory, { recursive: true, force: true });
  });

  it('passes Redocly’s recommended rules with no error and no warning', async () => {
    expect(await redocly(blog.instance.document)).toEqual([]);
  });

  it('passes Spectral’s spectral:oas rules with no error and no warning', async () => {
    expect(await spectral(blog.instance.document)).toEqual([]);
  });

  it('fails both linters on a document that breaks their rules (the checks above can fail)', async () => {
    const broken = structuredClone(blog.instance.document);
    delete broken.servers;
    delete broken.info.license;
    expect(await redocly(broken)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^error no-empty-servers/),
        expect.stringMatching(/^warn info-license/),
      ]),
    );
    expect(await spectral(broken)).toEqual(
      expect.arrayContaining([expect.stringMatching(/oas3-api-servers/)]),
    );
  });

  it('gives clients from orval, openapi-typescript and @hey-api/openapi-ts that compile under strict tsc', async () => {
    const source = join(directory, 'openapi.json');
    await writeFile(source, JSON.stringify(blog.instance.document));
    await writeFile(
      join(directory, 'openapi-typescript.ts'),
      astToString(await openapiTS(structuredClone(blog.instance.document) as never)),
    );
    await heyApi({
      input: source,
      output: { path: join(directory, 'hey-api') },
      plugins: ['@hey-api/client-fetch'],
      logs: { level: 'silent' },
    });
    await orval({
      input: { target: source },
      output: { target: join(directory, 'orval', 'blog.ts'), client: 'fetch', prettier: false },
    });
    for (const [name, text] of Object.entries(usage)) await writeFile(join(directory, name), text);

    await writeFile(join(directory, 'tsconfig.json'), tsconfig(['*.ts', 'hey-api', 'orval'], false));
    expect(compile(join(directory, 'tsconfig.json'))).toBe('');
    // exactOptionalPropertyTypes too, for all but @hey-api's runtime client (and the SDK that imports it), which does not
    // compile under it whatever the document says (docs/openapi.md, "Tools").
    await writeFile(
      join(directory, 'tsconfig.exact.json'),
      tsconfig(
        [
          'openapi-typescript.ts',
          'use-openapi-typescript.ts',
          'orval',
          'use-orval.ts',
          'hey-api/types.gen.ts',
        ],
        true,
      ),
    );
    expect(compile(join(directory, 'tsconfig.exact.json'))).toBe('');
  });

  it('fails the compile when a generated client cannot type a problem (the check above can fail)', async () => {
    await writeFile(
      join(directory, 'use-orval-wrong.ts'),
      `import { getPost } from './orval/blog';
export async function statusOf(id: string): Promise<404 | undefined> {
  const answer = await getPost(id);
  if (answer.status === 404) {
    const status: 401 = answer.data.status;
    return status;
  }
  return undefined;
}
`,
    );
    await writeFile(join(directory, 'tsconfig.wrong.json'), tsconfig(['orval', 'use-orval-wrong.ts'], true));
    expect(compile(join(directory, 'tsconfig.wrong.json'))).toMatch(/use-orval-wrong\.ts.*TS2322/);
  });
});
