/**
 * The blog as `npm start` runs it, traced through the standard `OTEL_*` variables into a local
 * OTLP receiver, on PostgreSQL: the request's SERVER span with its route and procedure, the
 * handler under it and the driver's queries under the handler, the service's name, the trace ids
 * on the log line; over OTLP's JSON and its protobuf encodings.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createPostgresDatabase } from './databases.js';
import { freePort, launch, proceedBin, type Running } from './support.js';

/** What the receiver got on /v1/traces: the body and its content type. */
interface Export {
  type: string;
  body: Buffer;
}

interface JsonSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: { key: string; value: { stringValue?: string; intValue?: number | string } }[];
}
interface JsonExport {
  resourceSpans: {
    resource: { attributes: JsonSpan['attributes'] };
    scopeSpans: { spans: JsonSpan[] }[];
  }[];
}

const postgresUrl = inject('postgresUrl');
const secret = 'a-secret-of-at-least-32-bytes-for-the-tests';

describe.skipIf(postgresUrl === null)('the blog traced with OpenTelemetry, on PostgreSQL', () => {
  let receiver: Server;
  let endpoint = '';
  const exports: Export[] = [];
  let database: Awaited<ReturnType<typeof createPostgresDatabase>>;

  beforeAll(async () => {
    receiver = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        if (request.url === '/v1/traces')
          exports.push({ type: request.headers['content-type'] ?? '', body: Buffer.concat(chunks) });
        response.writeHead(200, { 'content-type': request.headers['content-type'] ?? 'application/json' });
        response.end(request.headers['content-type']?.includes('json') ? '{}' : '');
      });
    }).listen(0, '127.0.0.1');
    await once(receiver, 'listening');
    endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    database = await createPostgresDatabase(postgresUrl ?? '');
  });
  afterAll(async () => {
    receiver?.close();
    await database?.drop();
  });

  /** The compiled blog with OTLP over `protocol`, until it listens. */
  async function startBlog(protocol: string): Promise<{ blog: Running; origin: string }> {
    const port = await freePort();
    const blog = launch(process.execPath, [proceedBin, 'start', 'dist/main.js'], {
      env: {
        PORT: String(port),
        DATABASE_URL: database.url,
        JWT_SECRET: secret,
        OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
        OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
        OTEL_SERVICE_NAME: 'blog-under-test',
        OTEL_TRACES_SAMPLER: 'always_on',
        OTEL_BSP_SCHEDULE_DELAY: '50',
        OTEL_METRICS_EXPORTER: 'none',
        OTEL_LOGS_EXPORTER: 'none',
      },
    });
    await blog.waitFor(`Server listening at http://127.0.0.1:${port}`);
    return { blog, origin: `http://127.0.0.1:${port}` };
  }

  async function stop(blog: Running): Promise<void> {
    process.kill(blog.pid, 'SIGTERM');
    expect(await blog.exited).toEqual({ code: 0, signal: null });
  }

  it('sends, over http/json, a create’s SERVER span with the handler under it and the queries under the handler; the log line names the trace', {
    timeout: 60_000,
  }, async () => {
    const { blog, origin } = await startBlog('http/json');
    try {
      const registered = await fetch(`${origin}/api/auth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'traced@example.com', password: 'a-long-password', name: 'Traced' }),
      });
      expect(registered.status).toBe(201);
      const { accessToken } = (await registered.json()) as { accessToken: string };
      const created = await fetch(`${origin}/api/posts`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${accessToken}` },
        body: JSON.stringify({ title: 'Traced', content: 'Every query in its place.' }),
      });
      expect(created.status).toBe(201);
      const requestId = created.headers.get('x-request-id');

      const spans = (): { spans: JsonSpan[]; service: string[] } => {
        const all = exports
          .filter((each) => each.type.includes('json'))
          .flatMap((each) => (JSON.parse(each.body.toString('utf8')) as JsonExport).resourceSpans);
        return {
          spans: all.flatMap((resource) => resource.scopeSpans.flatMap((scope) => scope.spans)),
          service: all.map(
            (resource) =>
              resource.resource.attributes.find((attribute) => attribute.key === 'service.name')?.value
                .stringValue ?? '',
          ),
        };
      };
      const attribute = (span: JsonSpan, key: string) => {
        const value = span.attributes.find((each) => each.key === key)?.value;
        return value?.stringValue ?? (value?.intValue === undefined ? undefined : Number(value.intValue));
      };
      const isCreate = (span: JsonSpan) =>
        span.kind === 2 && attribute(span, 'proceed.request_id') === requestId;
      await expect.poll(() => spans().spans.filter(isCreate), { timeout: 20_000 }).toHaveLength(1);
      const { spans: exported, service } = spans();
      expect(new Set(service)).toEqual(new Set(['blog-under-test']));
      const server = exported.find(isCreate) as JsonSpan;
      expect(server.name).toBe('POST /api/posts');
      expect(attribute(server, 'http.route')).toBe('/api/posts');
      expect(attribute(server, 'proceed.procedure')).toBe('posts.createPost');
      expect(attribute(server, 'http.response.status_code')).toBe(201);

      const childrenOf = (parent: JsonSpan) =>
        exported.filter((span) => span.traceId === parent.traceId && span.parentSpanId === parent.spanId);
      const steps = childrenOf(server).map((span) => span.name);
      expect(steps).toEqual(
        expect.arrayContaining([
          'guard authenticated',
          'validate input',
          'handler posts.createPost',
          'serialize output',
        ]),
      );
      // The signed-in user is loaded in one query before the route runs: under the server span.
      expect(childrenOf(server).some((span) => span.name.startsWith('pg.query'))).toBe(true);
      const handler = childrenOf(server).find((span) => span.name === 'handler posts.createPost') as JsonSpan;
      const queries = childrenOf(handler).filter((span) => span.name.startsWith('pg.query'));
      expect(queries.length).toBeGreaterThan(0);
      // The driver's spans carry the statement, never its values.
      expect(queries.every((query) => attribute(query, 'db.system.name') === 'postgresql')).toBe(true);
      expect(queries.map((query) => attribute(query, 'db.query.text'))).toContainEqual(
        expect.stringMatching(/^insert into "posts"/),
      );
      expect(JSON.stringify(queries)).not.toContain('Every query in its place');

      const line = blog
        .output()
        .split('\n')
        .filter((each) => each.startsWith('{'))
        .map((each) => JSON.parse(each) as Record<string, unknown>)
        .find((each) => each.msg === 'request completed' && each.reqId === requestId);
      expect(line).toMatchObject({ trace_id: server.traceId, span_id: server.spanId });
    } finally {
      await stop(blog);
    }
  });

  it('sends over http/protobuf, the SDK’s default', { timeout: 60_000 }, async () => {
    exports.length = 0;
    const { blog, origin } = await startBlog('http/protobuf');
    try {
      const response = await fetch(`${origin}/api/posts?limit=1`);
      expect(response.status).toBe(200);
      // Protobuf keeps strings as they are: the span's name and route are in the bytes.
      await expect
        .poll(() => exports.filter((each) => each.body.includes('GET /api/posts')).length, {
          timeout: 20_000,
        })
        .toBe(1);
      const sent = exports.find((each) => each.body.includes('GET /api/posts')) as Export;
      expect(sent.type).toBe('application/x-protobuf');
      expect(sent.body.includes('posts.listPosts')).toBe(true);
      expect(sent.body.includes('blog-under-test')).toBe(true);
    } finally {
      await stop(blog);
    }
  });
});
