/**
 * The blog's OpenAPI document in the tools its users already have (docs/openapi.md, "Tools"):
 * the two linters pass it with no error and no warning, Spectral's OWASP rules with the override
 * Proceed ships with no error (each remaining warning of a kind docs/openapi.md explains), and the clients three generators write
 * from it compile under strict TypeScript, with the problem answers typed (a 404's `status` is
 * `404`, its `code` is `'NOT_FOUND'`). On Node only: on Bun and Deno, openapi.test.ts checks
 * that the document served there is this one.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Parser as AsyncApiParser } from '@asyncapi/parser';
import { createClient as heyApi } from '@hey-api/openapi-ts';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import spectralCore from '@stoplight/spectral-core';
import owaspRuleset from '@stoplight/spectral-owasp-ruleset';
import spectralParsers from '@stoplight/spectral-parsers';
import { oas } from '@stoplight/spectral-rulesets';
import openapiTS, { astToString } from 'openapi-typescript';
import { generate as orval } from 'orval';
import { createApp, NotFoundError, procedure, procedures } from 'proceedjs';
import { generateOpenApi, type OpenApiDocument, type OpenApiOperation } from 'proceedjs/openapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
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

interface Finding {
  severity: 'error' | 'warn';
  rule: string;
  path: (string | number)[];
}

/** The override `proceed openapi --lint` applies, as the package ships it (beside its package.json). */
const owaspOverride = parseYaml(
  readFileSync(
    join(
      dirname(createRequire(import.meta.url).resolve('proceedjs/package.json')),
      'openapi-owasp.spectral.yaml',
    ),
    'utf8',
  ),
) as { extends: string[]; rules: Record<string, string> };

/** Spectral's OWASP rules on a document: with the shipped override, or as they come. */
async function owasp(document: OpenApiDocument, override: boolean): Promise<Finding[]> {
  const linter = new spectralCore.Spectral();
  linter.setRuleset({
    extends: [[owaspRuleset as never, 'recommended']],
    ...(override ? { rules: owaspOverride.rules as never } : {}),
  });
  const results = await linter.run(
    new spectralCore.Document(JSON.stringify(document), spectralParsers.Json, join(blogRoot, 'openapi.json')),
  );
  return results.map((result) => ({
    severity: result.severity === 0 ? 'error' : 'warn',
    rule: String(result.code).replace('owasp:', ''),
    path: result.path,
  }));
}

/** The operation a finding's path starts in (`paths./api/posts.get…`), if it does. */
function operationAt(document: OpenApiDocument, path: Finding['path']): OpenApiOperation | undefined {
  if (path[0] !== 'paths') return undefined;
  return document.paths[String(path[1])]?.[String(path[2]) as 'get'];
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
  const crossOrigin = useBlog(pglite, { corsOrigins: ['https://app.example'] });
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

  it('passes Redocly’s recommended rules with no error, and warns only that the WebSocket route has no 2XX', async () => {
    // A handshake succeeds with 101 Switching Protocols, never a 2XX (docs/openapi.md, "Tools").
    expect(await redocly(blog.instance.document)).toEqual([
      'warn operation-2xx-response: Operation must have at least one `2XX` response. #/paths/~1api~1posts~1live/get/responses',
    ]);
  });

  it('passes Redocly’s recommended rules for a new app too: no auth and no .meta(), no error, and no warning once it names its license and tags', async () => {
    // What `npm create proceed` users start from: each operation's summary is its procedure's
    // name in words, and a route without credentials says so (`security: []`).
    const Note = z.object({ id: z.string(), text: z.string() });
    const notes = new Map<string, z.infer<typeof Note>>();
    const app = createApp({ logger: false }).mount([
      procedures('notes', {
        listNotes: procedure()
          .output(z.array(Note))
          .query(() => [...notes.values()]),
        getNote: procedure()
          .input(z.object({ id: z.string() }))
          .output(Note)
          .query(({ input }) => {
            const note = notes.get(input.id);
            if (note === undefined) throw new NotFoundError('No such note');
            return note;
          }),
        createNote: procedure()
          .input(z.object({ text: z.string().min(1) }))
          .output(Note)
          .mutation(({ input }) => {
            const note = { id: String(notes.size + 1), text: input.text };
            notes.set(note.id, note);
            return note;
          }),
        deleteNote: procedure()
          .input(z.object({ id: z.string() }))
          .mutation(({ input }) => {
            notes.delete(input.id);
          }),
      }),
    ]);
    const document = generateOpenApi({ app, info: { title: 'Notes', version: '1.0.0' } });
    // What only the app can write is all that is left: its license and what its tags mean.
    expect(await redocly(document)).toEqual([
      'warn info-license: Info object should contain `license` field. #/info',
      'warn tag-description: Tag object should contain `description` field. #/tags/0/description',
    ]);
    const described = generateOpenApi({
      app,
      info: { title: 'Notes', version: '1.0.0', license: { name: 'MIT', identifier: 'MIT' } },
      tags: { notes: 'Short notes' },
    });
    expect(await redocly(described)).toEqual([]);
    await app.close();
  });

  it('passes Spectral’s spectral:oas rules with no error, and warns only that the WebSocket route has no 2xx and on the roles a bearer requirement names', async () => {
    // A WebSocket's handshake succeeds with 101, neither a 2xx nor a 3xx; the rule on scopes reads
    // a 3.1 document's roles as 3.0 would, where only OAuth named any (docs/openapi.md, "Tools").
    const roleWarning = (role: string, at: string) =>
      `1 oas3-operation-security-defined: "${role}" must be listed among scopes. paths.${at}.security.0.bearerAuth.0`;
    expect(await spectral(blog.instance.document)).toEqual([
      roleWarning('admin', '/api/users.get'),
      roleWarning('admin', '/api/users.post'),
      roleWarning('admin', '/api/users/{id}.delete'),
      '1 operation-success-response: Operation must have at least one "2xx" or "3xx" response. paths./api/posts/live.get.responses',
    ]);
  });

  it('passes Spectral’s OWASP rules with the shipped override: no error, and only the warnings docs/openapi.md explains', async () => {
    const document = blog.instance.document;
    expect(owaspOverride.extends).toEqual(['@stoplight/spectral-owasp-ruleset']);
    const findings = await owasp(document, true);
    expect(findings.filter((finding) => finding.severity === 'error')).toEqual([]);
    const byRule = new Map<string, Finding['path'][]>();
    for (const finding of findings)
      byRule.set(finding.rule, [...(byRule.get(finding.rule) ?? []), finding.path]);
    expect([...byRule.keys()].sort()).toEqual([
      'api2:2023-read-restricted',
      'api4:2023-rate-limit',
      'api4:2023-rate-limit-responses-429',
      'api4:2023-string-limit',
      'api4:2023-string-restricted',
      'api8:2023-define-error-responses-401',
      'api8:2023-define-error-responses-500',
      'api8:2023-define-error-validation',
    ]);
    const at = (rule: string) => (byRule.get(rule) ?? []).map((path) => path.join('.'));
    // The health probes are public and cannot answer 401 (nor 500: a failed check is 503).
    expect(at('api2:2023-read-restricted')).toEqual([
      'paths./api/health.get.security',
      'paths./api/health/live.get.security',
    ]);
    for (const rule of ['api8:2023-define-error-responses-401', 'api8:2023-define-error-responses-500'])
      expect(new Set(at(rule))).toEqual(
        new Set(['paths./api/health.get.responses', 'paths./api/health/live.get.responses']),
      );
    // The health routes take no input and are no procedures: they never answer 400. (A procedure
    // without input answers a query key it was sent with 400, and says so.)
    expect(new Set(at('api8:2023-define-error-validation'))).toEqual(
      new Set(['paths./api/health.get.responses', 'paths./api/health/live.get.responses']),
    );
    // Rate limits: only on the routes without a rateLimit() step (or the HTTP server's own 408 and 431).
    for (const path of [
      ...(byRule.get('api4:2023-rate-limit') ?? []),
      ...(byRule.get('api4:2023-rate-limit-responses-429') ?? []),
    ]) {
      if (path[0] === 'components') expect(String(path[2])).not.toMatch(/OnLimitedRoute$/);
      else expect(operationAt(document, path)?.responses['429'], path.join('.')).toBeUndefined();
    }
    // Strings without maxLength: only those nothing bounds (docs/openapi.md, "OWASP rules").
    for (const path of byRule.get('api4:2023-string-limit') ?? []) {
      const text = path.join('.');
      const parameter =
        path[3] === 'parameters' ? operationAt(document, path)?.parameters?.[Number(path[4])] : undefined;
      const unbounded =
        parameter?.in === 'header' ||
        parameter?.name === 'createdAfter' ||
        /\.headers\.(ETag|Location|Content-Disposition)\.schema$/.test(text) ||
        /\.content\.(\*\/\*|text\/event-stream)\.schema$/.test(text) ||
        /^components\.schemas\.Problem\.properties\.(detail|errors\.items\.properties\.(path|message))$/.test(
          text,
        ) ||
        text.endsWith('/attachments.post.responses.201.content.application/json.schema.properties.mediaType');
      expect(unbounded, text).toBe(true);
    }
  });

  it('declares CORS on every answer when the blog has CORS_ORIGINS, as the OWASP rule the override turns off asks', async () => {
    const findings = await owasp(crossOrigin.instance.document, false);
    expect(findings.filter((finding) => finding.rule === 'api8:2023-define-cors-origin')).toEqual([]);
    // Without origins, the rule finds every response: the check above can fail.
    expect(
      (await owasp(blog.instance.document, false)).filter(
        (finding) => finding.rule === 'api8:2023-define-cors-origin',
      ),
    ).not.toEqual([]);
    expect(
      (await owasp(crossOrigin.instance.document, true)).filter((finding) => finding.severity === 'error'),
    ).toEqual([]);
  });

  it("serves an AsyncAPI 3.0 document of its live socket that AsyncAPI's own parser reads without an error", async () => {
    const served = await fetch(`${blog.origin}/api/docs/asyncapi/json`);
    expect(served.status).toBe(200);
    const text = await served.text();
    const parser = new AsyncApiParser();
    const { document, diagnostics } = await parser.parse(text);
    expect(diagnostics.filter((diagnostic) => diagnostic.severity === 0)).toEqual([]);
    expect(document?.version()).toBe('3.0.0');
    const live = document?.channels().get('livePosts');
    expect(live?.address()).toBe('/api/posts/live');
    expect(
      live
        ?.messages()
        .all()
        .map((message) => message.id()),
    ).toEqual(['received', 'sent', 'error']);
    // The parser can fail: a channel that points at a message that is not there.
    const broken = JSON.parse(text) as { channels: { livePosts: { messages: { sent: { $ref: string } } } } };
    broken.channels.livePosts.messages.sent.$ref = '#/components/messages/nowhere';
    const refused = await parser.parse(JSON.stringify(broken));
    expect(refused.diagnostics.filter((diagnostic) => diagnostic.severity === 0)).not.toEqual([]);
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
    const unbounded = structuredClone(blog.instance.document);
    const page = unbounded.paths['/api/posts']?.get?.responses['200'];
    if (page === undefined || '$ref' in page) throw new Error('GET /api/posts has no inline 200');
    const properties = page.content?.['application/json']?.schema.properties as
      | Record<string, { maxItems?: number }>
      | undefined;
    if (properties?.data === undefined) throw new Error('GET /api/posts has no data array');
    delete properties.data.maxItems;
    expect(await owasp(unbounded, true)).toEqual(
      expect.arrayContaining([expect.objectContaining({ severity: 'error', rule: 'api4:2023-array-limit' })]),
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
