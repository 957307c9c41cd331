import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { notes, notesApp } from '../../test/fixtures/notes.js';
import { versionedRecords } from '../../test/fixtures/versioned-records.js';
import { download, sendFile } from '../core/files.js';
import { procedure, procedures } from '../core/procedure.js';
import type { App } from '../server/app.js';
import { createApp } from '../server/create-app.js';
import { ClientError, createClient, ProblemError, routeManifest } from './index.js';

const api = [notes] as const;

interface Exchange {
  method: string;
  url: string;
  headers: Headers;
  body: string | undefined;
  status: number;
  location: string | null;
}

/** A fetch that records what went over the wire, so the tests see statuses and bodies. */
function recordingFetch(log: Exchange[]): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    log.push({
      method: init?.method ?? 'GET',
      url: String(input),
      headers: new Headers(init?.headers),
      body: typeof init?.body === 'string' ? init.body : undefined,
      status: response.status,
      location: response.headers.get('location'),
    });
    return response;
  };
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to fail');
}

let anonymous: App;
let asAdmin: App;
let anonymousUrl: string;
let adminUrl: string;

beforeAll(async () => {
  anonymous = notesApp();
  asAdmin = notesApp({ id: 'u9', role: 'admin' });
  anonymousUrl = await anonymous.listen({ port: 0, host: '127.0.0.1', handleSignals: false });
  adminUrl = await asAdmin.listen({ port: 0, host: '127.0.0.1', handleSignals: false });
});

afterAll(async () => {
  await anonymous.close();
  await asAdmin.close();
});

describe('createClient over a real socket', () => {
  it('lists with the input in the query string, coerced by the server', async () => {
    const log: Exchange[] = [];
    const client = createClient<typeof api>({ baseUrl: anonymousUrl, fetch: recordingFetch(log) });
    const after = new Date('2024-01-02T03:04:05.000Z');
    const page = await client.notes.listNotes({ limit: 5, pinned: true, after, tags: ['a', 'c'] });
    expect(page.data).toEqual([{ id: '1', title: 'One' }]);
    expect(page.echo).toEqual({
      limit: 5,
      pinned: true,
      after: '2024-01-02T03:04:05.000Z',
      tags: ['a', 'c'],
    });
    expect(log[0]?.method).toBe('GET');
    expect(log[0]?.url).toBe(
      `${anonymousUrl}/api/notes?limit=5&pinned=true&after=2024-01-02T03%3A04%3A05.000Z&tags=a&tags=c`,
    );
    expect(log[0]?.body).toBeUndefined();
  });

  it('calls a procedure with optional input without an argument', async () => {
    const client = createClient<typeof api>({ baseUrl: anonymousUrl });
    const page = await client.notes.listNotes();
    expect(page.echo).toEqual({ limit: 20 });
  });

  it('gets one record, the id in the path', async () => {
    const client = createClient<typeof api>({ baseUrl: anonymousUrl });
    expect(await client.notes.getNote({ id: '1' })).toEqual({ id: '1', title: 'One' });
  });

  it('returns the view the server picked, dates as ISO strings', async () => {
    const client = createClient<typeof api>({ baseUrl: adminUrl });
    expect(await client.notes.getNote({ id: '1' })).toEqual({
      id: '1',
      title: 'One',
      body: 'b',
      ownerId: 'u1',
      createdAt: '1970-01-01T00:00:00.000Z',
    });
  });

  it('creates with a JSON body and gets 201 with a Location', async () => {
    const log: Exchange[] = [];
    const client = createClient<typeof api>({ baseUrl: adminUrl, fetch: recordingFetch(log) });
    const created = await client.notes.createNote({ title: 'Two', body: 'second' });
    expect(created).toEqual({ id: '2', title: 'Two', body: 'second', ownerId: 'u1' });
    expect(log[0]).toMatchObject({ method: 'POST', url: `${adminUrl}/api/notes`, status: 201 });
    expect(log[0]?.location).toBe('/api/notes/2');
    expect(JSON.parse(log[0]?.body ?? '')).toEqual({ title: 'Two', body: 'second' });
    expect(log[0]?.headers.get('content-type')).toBe('application/json');
  });

  it('updates with the id in the path and data as the whole body', async () => {
    const log: Exchange[] = [];
    const client = createClient<typeof api>({ baseUrl: adminUrl, fetch: recordingFetch(log) });
    const updated = await client.notes.updateNote({ id: '2', data: { title: 'Deux' } });
    expect(updated).toMatchObject({ id: '2', title: 'Deux' });
    expect(log[0]).toMatchObject({ method: 'PUT', url: `${adminUrl}/api/notes/2`, status: 200 });
    expect(JSON.parse(log[0]?.body ?? '')).toEqual({ title: 'Deux' });
  });

  it('deletes and answers { success: true }', async () => {
    const log: Exchange[] = [];
    const client = createClient<typeof api>({ baseUrl: adminUrl, fetch: recordingFetch(log) });
    expect(await client.notes.deleteNote({ id: '2' })).toEqual({ success: true });
    expect(log[0]).toMatchObject({ method: 'DELETE', url: `${adminUrl}/api/notes/2`, status: 200 });
    await expect(client.notes.getNote({ id: '2' })).rejects.toMatchObject({ status: 404, code: 'NOT_FOUND' });
  });

  it('URL-encodes path parameters', async () => {
    const client = createClient<typeof api>({ baseUrl: anonymousUrl });
    const error = await rejection(client.notes.getNote({ id: 'a/b c' }));
    expect(error).toBeInstanceOf(ProblemError);
    expect((error as ProblemError).detail).toBe('No note a/b c');
  });

  it('sends the token from a string or a function, per call', async () => {
    const log: Exchange[] = [];
    let token: string | undefined = 'first';
    const client = createClient<typeof api>({
      baseUrl: anonymousUrl,
      fetch: recordingFetch(log),
      token: async () => token,
      headers: { 'x-app': 'tests' },
    });
    await client.notes.listNotes();
    token = undefined;
    await client.notes.listNotes(undefined, { headers: { 'x-call': 'yes' } });
    expect(log[0]?.headers.get('authorization')).toBe('Bearer first');
    expect(log[1]?.headers.get('authorization')).toBeNull();
    expect(log[0]?.headers.get('x-app')).toBe('tests');
    expect(log[1]?.headers.get('x-call')).toBe('yes');
    const fixed = createClient<typeof api>({
      baseUrl: anonymousUrl,
      fetch: recordingFetch(log),
      token: 'static',
    });
    await fixed.notes.listNotes();
    expect(log[2]?.headers.get('authorization')).toBe('Bearer static');
  });
});

describe('prefix and base URL', () => {
  it('calls an app mounted under another prefix, behind a base URL with a trailing slash', async () => {
    const store = new Map([
      ['1', { id: '1', title: 'One', body: 'b', ownerId: 'u1', secret: 's', createdAt: new Date(0) }],
    ]);
    const app = createApp({ logger: false, userFromContext: true, context: () => ({ notes: store }) }).mount(
      [notes],
      {
        prefix: '/api/v2',
      },
    );
    const url = await app.listen({ port: 0, host: '127.0.0.1', handleSignals: false });
    try {
      const log: Exchange[] = [];
      const client = createClient<typeof api>({
        baseUrl: `${url}/`,
        prefix: 'api/v2/',
        fetch: recordingFetch(log),
      });
      expect(await client.notes.getNote({ id: '1' })).toEqual({ id: '1', title: 'One' });
      expect(log[0]?.url).toBe(`${url}/api/v2/notes/1`);
    } finally {
      await app.close();
    }
  });
});

describe('routes from a manifest', () => {
  it('refuses an overridden procedure without a manifest, naming it', async () => {
    const client = createClient<typeof api>({ baseUrl: anonymousUrl });
    const error = await rejection(client.notes.pinNote({ id: 7 }));
    expect(error).toBeInstanceOf(ClientError);
    expect((error as ClientError).reason).toBe('unknown-route');
    expect((error as ClientError).message).toContain('No route for "notes.pinNote"');
    expect((error as ClientError).message).toContain('routeManifest()');
  });

  it('calls an override through the manifest: path params from the input, no body left', async () => {
    const routes = routeManifest(api);
    expect(routes.notes?.pinNote).toEqual({ method: 'POST', path: '/notes/:id/pin', inputMode: 'body' });
    expect(routes.notes?.updateNote).toEqual({ method: 'PUT', path: '/notes/:id', inputMode: 'update' });
    const log: Exchange[] = [];
    const client = createClient<typeof api>({ baseUrl: anonymousUrl, routes, fetch: recordingFetch(log) });
    expect(await client.notes.pinNote({ id: 7 })).toEqual({ pinned: 7 });
    expect(log[0]).toMatchObject({ method: 'POST', url: `${anonymousUrl}/api/notes/7/pin`, body: undefined });
  });

  it('refuses a prefix no mount has, and a prefix for collections (both gave a manifest that changed nothing)', () => {
    expect(routeManifest(anonymous, { prefix: '/api' })).toEqual(routeManifest(anonymous));
    expect(() => routeManifest(anonymous, { prefix: '/apii' })).toThrow(
      /^routeManifest: no collection is mounted at "\/apii" \(prefixes: "\/api"\)/,
    );
    expect(() => routeManifest(api, { prefix: '/v1' })).toThrow(/collections have none/);
  });

  it('builds the same manifest from an app, and survives a JSON round trip', () => {
    const fromApp = routeManifest(anonymous);
    expect(fromApp).toEqual(routeManifest(api));
    expect(JSON.parse(JSON.stringify(fromApp))).toEqual(fromApp);
    expect(Object.keys(fromApp.notes ?? {})).toEqual([
      'listNotes',
      'getNote',
      'createNote',
      'updateNote',
      'deleteNote',
      'pinNote',
      'broken',
    ]);
  });

  it('strips the prefix of each mount', () => {
    const app = createApp({
      logger: false,
      userFromContext: true,
      context: () => ({ notes: new Map() }),
    }).mount([notes], {
      prefix: '/api/v2',
    });
    expect(routeManifest(app).notes?.getNote).toEqual({
      method: 'GET',
      path: '/notes/:id',
      inputMode: 'query',
    });
  });
});

describe('path parameters and files in any manifest', () => {
  const reports = procedures('reports', {
    dayReport: procedure()
      .rest({ method: 'GET', path: '/reports/day/:day' })
      .input(z.object({ day: z.date() }))
      .query(({ input }) => ({ day: input.day.toISOString() })),
    createReport: procedure()
      .input(z.object({ title: z.string(), file: z.file().optional() }))
      .mutation(({ input }) => ({ title: input.title, file: input.file?.name ?? null })),
  });
  let app: App;
  let url: string;
  beforeAll(async () => {
    app = createApp({ logger: false }).mount([reports]);
    url = await app.listen({ port: 0, host: '127.0.0.1', handleSignals: false });
  });
  afterAll(() => app.close());

  it('sends a date in a path as the ISO 8601 text the server reads back, as in a query string', async () => {
    const client = createClient<[typeof reports]>({ baseUrl: url, routes: routeManifest(app) });
    const day = new Date('2024-05-01T00:00:00Z');
    expect(await client.reports.dayReport({ day })).toEqual({ day: '2024-05-01T00:00:00.000Z' });
  });

  it("gives the manifest of the collections what the app's says: a form route without its file is still a form", async () => {
    expect(routeManifest([reports])).toEqual(routeManifest(app));
    const client = createClient<[typeof reports]>({ baseUrl: url, routes: routeManifest([reports]) });
    expect(await client.reports.createReport({ title: 'no file' })).toEqual({ title: 'no file', file: null });
  });
});

describe('errors', () => {
  it('turns a 404 into a ProblemError with the problem fields', async () => {
    const client = createClient<typeof api>({ baseUrl: anonymousUrl });
    const error = await rejection(client.notes.getNote({ id: 'missing' }));
    expect(error).toBeInstanceOf(ProblemError);
    expect(error).toBeInstanceOf(Error);
    const problem = error as ProblemError;
    expect(problem.status).toBe(404);
    expect(problem.code).toBe('NOT_FOUND');
    expect(problem.title).toBe('Not found');
    expect(problem.detail).toBe('No note missing');
    expect(problem.message).toBe('No note missing');
    expect(problem.errors).toEqual([]);
    expect(problem.problem).toMatchObject({ type: 'urn:proceed:problem:not-found', status: 404 });
  });

  it('turns a 400 into a ProblemError with field errors', async () => {
    const client = createClient<typeof api>({ baseUrl: adminUrl });
    const error = (await rejection(client.notes.createNote({ title: '', body: 'x' }))) as ProblemError;
    expect(error.status).toBe(400);
    expect(error.code).toBe('VALIDATION_FAILED');
    expect(error.errors).toHaveLength(1);
    expect(error.errors[0]?.path).toBe('title');
    expect(error.detail).toMatch(/^title: /);
  });

  it('reports a bad query value as a 400 from the server', async () => {
    const client = createClient<typeof api>({ baseUrl: anonymousUrl });
    const error = (await rejection(client.notes.listNotes({ limit: 1000 }))) as ProblemError;
    expect(error.code).toBe('VALIDATION_FAILED');
    expect(error.errors.map((field) => field.path)).toEqual(['limit']);
  });

  it('keeps 401 headers: a guard without a user', async () => {
    const client = createClient<typeof api>({ baseUrl: anonymousUrl });
    const error = (await rejection(client.notes.deleteNote({ id: '1' }))) as ProblemError;
    expect(error.status).toBe(401);
    expect(error.code).toBe('UNAUTHENTICATED');
    expect(error.headers.get('www-authenticate')).toBe('Bearer');
  });

  it('reports a refused connection as a network ClientError', async () => {
    const { createServer } = await import('node:net');
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const client = createClient<typeof api>({ baseUrl: `http://127.0.0.1:${port}` });
    const error = (await rejection(client.notes.listNotes())) as ClientError;
    expect(error).toBeInstanceOf(ClientError);
    expect(error.reason).toBe('network');
    expect(error.message).toContain(`GET http://127.0.0.1:${port}/api/notes failed`);
  });

  it('reports a non-JSON answer as an invalid-response ClientError with the status', async () => {
    const html: typeof fetch = async () =>
      new Response('<html><body>Bad gateway</body></html>', {
        status: 502,
        statusText: 'Bad Gateway',
        headers: { 'content-type': 'text/html' },
      });
    const client = createClient<typeof api>({ baseUrl: 'http://example.test', fetch: html });
    const error = (await rejection(client.notes.getNote({ id: '1' }))) as ClientError;
    expect(error).toBeInstanceOf(ClientError);
    expect(error.reason).toBe('invalid-response');
    expect(error.status).toBe(502);
    expect(error.message).toContain('answered 502 Bad Gateway without problem details');

    const text: typeof fetch = async () => new Response('ok', { status: 200 });
    const plain = createClient<typeof api>({ baseUrl: 'http://example.test', fetch: text });
    await expect(plain.notes.getNote({ id: '1' })).rejects.toMatchObject({
      reason: 'invalid-response',
      message: expect.stringContaining('expected JSON'),
    });

    const broken: typeof fetch = async () =>
      new Response('{"data":', { status: 200, headers: { 'content-type': 'application/json' } });
    const truncated = createClient<typeof api>({ baseUrl: 'http://example.test', fetch: broken });
    await expect(truncated.notes.getNote({ id: '1' })).rejects.toMatchObject({ reason: 'invalid-response' });
  });

  it('refuses input that cannot go in a query string', async () => {
    const client = createClient<typeof api>({ baseUrl: anonymousUrl });
    const error = (await rejection(
      client.notes.listNotes({ limit: { nested: true } } as unknown as { limit: number }),
    )) as ClientError;
    expect(error.reason).toBe('invalid-input');
    expect(error.message).toContain('"limit" cannot be sent in a query string');
  });

  it('names a missing path parameter', async () => {
    const client = createClient<typeof api>({ baseUrl: anonymousUrl });
    const error = (await rejection(client.notes.getNote({} as { id: string }))) as ClientError;
    expect(error.reason).toBe('invalid-input');
    expect(error.message).toBe('notes.getNote: Missing path parameter "id"');
  });

  it('refuses a path parameter that would call another route (empty, . or ..) before sending', async () => {
    const sent: string[] = [];
    const recording = async (input: URL | RequestInfo) => {
      sent.push(String(input instanceof Request ? input.url : input));
      return new Response('{}', { headers: { 'content-type': 'application/json' } });
    };
    const client = createClient<typeof api>({ baseUrl: 'http://example.test', fetch: recording });
    for (const id of ['', '.', '..']) {
      const error = (await rejection(client.notes.getNote({ id }))) as ClientError;
      expect(error.reason).toBe('invalid-input');
      expect(error.message).toContain('no URL carries as a path segment');
    }
    expect(sent).toEqual([]);
  });

  it('is not mistaken for a promise', async () => {
    const client = createClient<typeof api>({ baseUrl: anonymousUrl });
    expect(await Promise.resolve(client)).toBe(client);
    expect(await Promise.resolve(client.notes)).toBe(client.notes);
  });
});

describe('a procedure that answers a file', () => {
  const files = procedures('files', {
    getFile: procedure()
      .input(z.object({ id: z.string() }))
      .output(download({ types: ['text/csv'] }))
      .query(({ input }) =>
        sendFile(new TextEncoder().encode(`id\n${input.id}\n`), {
          type: 'text/csv',
          name: `Rapport März ${input.id}.csv`,
        }),
      ),
  });
  const app = createApp({ logger: false }).mount([files]);
  let url: string;
  beforeAll(async () => {
    url = await app.listen({ port: 0, host: '127.0.0.1', handleSignals: false });
  });
  afterAll(() => app.close());

  it('resolves to a File of the bytes, type and name sent, with the manifest', async () => {
    const routes = routeManifest([files]);
    expect(routes.files?.getFile).toEqual({
      method: 'GET',
      path: '/files/:id',
      inputMode: 'query',
      download: true,
    });
    const client = createClient<readonly [typeof files]>({ baseUrl: url, routes });
    const file = await client.files.getFile({ id: '42' });
    expect(file).toBeInstanceOf(File);
    expect(file.type).toBe('text/csv');
    expect(file.name).toBe('Rapport März 42.csv');
    expect(await file.text()).toBe('id\n42\n');
  });

  it('without the manifest, refuses the file with a pointer to it rather than mistype it', async () => {
    const client = createClient<readonly [typeof files]>({ baseUrl: url });
    await expect(client.files.getFile({ id: '42' })).rejects.toMatchObject({
      reason: 'invalid-response',
      message: expect.stringContaining('a procedure that answers a file needs the route manifest'),
    });
  });
});

describe('the answer of a call, told to onResponse', () => {
  const { record, collection } = versionedRecords();
  const app = createApp({ logger: false }).mount([collection]);
  afterAll(() => app.close());
  const client = createClient<readonly [typeof collection]>({
    baseUrl: 'http://api.example',
    fetch: (input, init) => app.fetch(new Request(input, init)),
  });

  it("gives the ETag of a read to send back as If-Match, and a refused write's 412 too", async () => {
    let etag: string | null = null;
    const read = await client.records.getRecord(
      { id: 'a' },
      {
        onResponse: ({ status, headers }) => {
          expect(status).toBe(200);
          etag = headers.get('etag');
        },
      },
    );
    expect(read.title).toBe('kept');
    expect(etag).toMatch(/^"4\./);
    const statuses: number[] = [];
    const ifMatch = { 'if-match': etag ?? '' };
    const onResponse = ({ status }: { status: number }) => statuses.push(status);
    await client.records.updateRecord(
      { id: 'a', data: { title: 'second' } },
      { headers: ifMatch, onResponse },
    );
    const stale = await rejection(
      client.records.updateRecord({ id: 'a', data: { title: 'third' } }, { headers: ifMatch, onResponse }),
    );
    expect((stale as ProblemError).code).toBe('PRECONDITION_FAILED');
    expect(statuses).toEqual([200, 412]);
    expect(record.title).toBe('second');
  });
});

describe('createClient options', () => {
  it('refuses an unknown key and a baseUrl no request could use, before any call', () => {
    // `{ tokne }` sent no Authorization, silently; `{ baseURL }` failed at the first call.
    expect(() => createClient({ baseUrl: 'http://127.0.0.1:3030', tokne: 'abc' } as never)).toThrow(
      /^createClient: unknown option "tokne"/,
    );
    expect(() => createClient({ baseURL: 'http://127.0.0.1:3030' } as never)).toThrow(
      /unknown option "baseURL" \(did you mean "baseUrl"\?\)/,
    );
    for (const baseUrl of [undefined, 'api example', 'localhost:3030', 42])
      expect(() => createClient({ baseUrl } as never)).toThrow(/baseUrl is the API's URL/);
    expect(() => createClient({ baseUrl: 'http://127.0.0.1:3030', prefix: 42 } as never)).toThrow(
      /prefix is a path/,
    );
    for (const baseUrl of ['', '/service', new URL('https://api.example.com')])
      expect(() => createClient({ baseUrl })).not.toThrow();
  });
});
