/**
 * Uploads on both adapters (docs/uploads.md): forms and raw bodies, each limit, media types,
 * files spooled past memory and removed once the request ends, over a real socket and through
 * `app.fetch`.
 */
import { readdir } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { eventually } from '../../test/processes.js';
import { createClient } from '../client/client.js';
import { routeManifest } from '../client/manifest.js';
import { ForbiddenError, ProceedConfigError } from '../core/errors.js';
import { download, sendFile } from '../core/files.js';
import { guard } from '../core/guards.js';
import { procedure, procedures } from '../core/procedure.js';
import { idempotencyPlugin, MemoryIdempotencyStore } from '../idempotency/index.js';
import type { App } from './app.js';
import { createApp } from './create-app.js';

interface Answer {
  status: number;
  headers: Headers;
  json: Record<string, unknown>;
}

let handled = 0;

const allowed = guard({
  name: 'allowed',
  check: (ctx: { request: { headers: Record<string, unknown> } }) =>
    ctx.request.headers['x-allowed'] === 'yes',
});

const filesCollection = procedures('files', {
  createFile: procedure()
    .input(
      z.object({
        title: z.string(),
        copies: z.number().int(),
        draft: z.boolean().optional(),
        file: z.file(),
      }),
    )
    .mutation(async ({ input }) => {
      handled += 1;
      return {
        id: 'f1',
        title: input.title,
        copies: input.copies,
        draft: input.draft ?? null,
        name: input.file.name,
        type: input.file.type,
        size: input.file.size,
        text: await input.file.slice(0, 16).text(),
      };
    }),
  createAlbum: procedure()
    .input(z.object({ photos: z.array(z.file().mime(['image/png', 'image/jpeg']).max(1000)) }))
    .uploads({ files: 3 })
    .rest({ method: 'POST', path: '/files/album' })
    .mutation(({ input }) => {
      handled += 1;
      return { count: input.photos.length, names: input.photos.map((photo) => photo.name) };
    }),
  createGuarded: procedure()
    .guard(allowed as never)
    .input(z.object({ file: z.file() }))
    .rest({ method: 'POST', path: '/files/guarded' })
    .mutation(({ input }) => {
      handled += 1;
      return { size: input.file.size };
    }),
  createRaw: procedure()
    .input(z.file().mime(['text/plain', 'application/octet-stream']))
    .uploads({ fileSize: 2048 })
    .rest({ method: 'POST', path: '/files/raw' })
    .mutation(async ({ input }) => {
      handled += 1;
      return { name: input.name, type: input.type, size: input.size, text: await input.text() };
    }),
  echoFile: procedure()
    .input(z.object({ file: z.file() }))
    .uploads({ memory: 1024 })
    .rest({ method: 'POST', path: '/files/echo' })
    .output(download())
    .mutation(({ input }) => sendFile(input.file)),
  updateFile: procedure()
    .input(z.object({ id: z.string(), data: z.file() }))
    .mutation(async ({ input }) => ({
      id: input.id,
      size: input.data.size,
      text: await input.data.text(),
    })),
  // An update whose input holds its file beside other fields: a form, its parts at the top.
  updateCover: procedure()
    .input(z.object({ id: z.string(), caption: z.string(), cover: z.file() }))
    .rest({ method: 'PUT', path: '/files/:id/cover' })
    .mutation(({ input }) => ({ id: input.id, caption: input.caption, size: input.cover.size })),
  createPair: procedure()
    .input(z.object({ small: z.file().max(10), large: z.file() }))
    .uploads({ memory: 1024 })
    .rest({ method: 'POST', path: '/files/pair' })
    .mutation(() => {
      handled += 1;
      return null;
    }),
  createSingle: procedure()
    .input(z.object({ file: z.file() }))
    .uploads({ files: 1 })
    .rest({ method: 'POST', path: '/files/single' })
    .mutation(({ input }) => {
      handled += 1;
      return { size: input.file.size };
    }),
  createCapped: procedure()
    .input(z.file())
    .uploads({ total: 1000 })
    .rest({ method: 'POST', path: '/files/capped' })
    .mutation(({ input }) => {
      handled += 1;
      return { size: input.size };
    }),
});

function buildApp(): App {
  return createApp({ logger: false, uploads: { memory: 64 * 1024 } }).mount([filesCollection]);
}

const form = (entries: [string, string | Blob, string?][]) => {
  const body = new FormData();
  for (const [name, value, filename] of entries)
    if (typeof value === 'string') body.append(name, value);
    else body.append(name, value, filename);
  return body;
};

const spooled = async () =>
  (await readdir(tmpdir())).filter((name) => name.startsWith('proceed-upload-')).length;

type Send = (path: string, init: RequestInit) => Promise<Answer & { raw: Response }>;

const adapters: { name: string; start: (app: App) => Promise<Send & { origin?: string }> }[] = [
  {
    name: 'Node (Fastify, a real socket)',
    async start(app) {
      const origin = await app.listen({ port: 0, host: '127.0.0.1', handleSignals: false });
      const send: Send & { origin?: string } = async (path, init) => {
        const raw = await fetch(`${origin}${path}`, { method: 'POST', ...init });
        const text = raw.headers.get('content-type')?.includes('json') === true ? await raw.text() : '{}';
        return { status: raw.status, headers: raw.headers, json: JSON.parse(text || '{}'), raw };
      };
      send.origin = origin;
      return send;
    },
  },
  {
    name: 'app.fetch',
    async start(app) {
      return async (path, init) => {
        const raw = await app.fetch(new Request(`http://api.example${path}`, { method: 'POST', ...init }), {
          ip: '127.0.0.1',
        });
        const text = raw.headers.get('content-type')?.includes('json') === true ? await raw.text() : '{}';
        return { status: raw.status, headers: raw.headers, json: JSON.parse(text || '{}'), raw };
      };
    },
  },
];

describe.each(adapters)('uploads on $name', ({ name, start }) => {
  let app: App;
  let send: Send & { origin?: string };
  beforeAll(async () => {
    app = buildApp();
    send = await start(app);
  });
  afterAll(() => app.close());

  it('takes a form: text fields coerced as a query string is, the file as a File', async () => {
    const before = handled;
    const answer = await send('/api/files', {
      body: form([
        ['title', 'Report'],
        ['copies', '3'],
        ['draft', 'true'],
        ['file', new Blob(['hello, upload'], { type: 'text/plain' }), 'résumé 2026.txt'],
      ]),
    });
    expect(answer.status).toBe(201);
    expect(answer.json).toEqual({
      id: 'f1',
      title: 'Report',
      copies: 3,
      draft: true,
      name: 'résumé 2026.txt',
      type: 'text/plain',
      size: 13,
      text: 'hello, upload',
    });
    expect(handled).toBe(before + 1);
  });

  it('refuses a form whose fields fail validation, naming them', async () => {
    const answer = await send('/api/files', {
      body: form([
        ['title', 'Report'],
        ['copies', 'many'],
        ['file', new Blob(['x']), 'x.bin'],
      ]),
    });
    expect(answer.status).toBe(400);
    expect(answer.json.code).toBe('VALIDATION_FAILED');
    expect(JSON.stringify(answer.json.errors)).toContain('copies');
  });

  it('refuses a text part the input does not name, on a create and on an update alike', async () => {
    const stray = await send('/api/files', {
      body: form([
        ['title', 'T'],
        ['copies', '1'],
        ['colour', 'red'],
        ['file', new Blob(['x']), 'x.bin'],
      ]),
    });
    expect(stray.status).toBe(400);
    expect(stray.json.errors).toEqual([{ path: 'colour', message: 'Unknown form field' }]);
    const cover = (extra: [string, string][]) =>
      send('/api/files/abc/cover', {
        method: 'PUT',
        body: form([['caption', 'Summer'], ...extra, ['cover', new Blob(['png']), 'c.png']]),
      });
    expect((await cover([])).json).toEqual({ id: 'abc', caption: 'Summer', size: 3 });
    const strayOnUpdate = await cover([['colour', 'red']]);
    expect(strayOnUpdate.status).toBe(400);
    expect(strayOnUpdate.json.errors).toEqual([{ path: 'colour', message: 'Unknown form field' }]);
  });

  it('refuses a file where text is due, and a file in a field that takes none', async () => {
    const text = await send('/api/files', {
      body: form([
        ['title', 'T'],
        ['copies', '1'],
        ['file', 'not a file'],
      ]),
    });
    expect(text.status).toBe(400);
    expect(JSON.stringify(text.json.errors)).toContain('file');
    const stray = await send('/api/files', {
      body: form([
        ['title', new Blob(['x']), 'x.txt'],
        ['copies', '1'],
        ['file', new Blob(['x']), 'x.txt'],
      ]),
    });
    expect(stray.status).toBe(400);
    expect(stray.json.errors).toEqual([{ path: 'title', message: 'This field takes no file' }]);
  });

  it('takes several files in an array field, and refuses a type .mime() does not list with 415', async () => {
    const png = new Blob([new Uint8Array([137, 80, 78, 71])], { type: 'image/png' });
    const ok = await send('/api/files/album', {
      body: form([
        ['photos', png, 'a.png'],
        ['photos', png, 'b.png'],
      ]),
    });
    expect(ok.status).toBe(201);
    expect(ok.json).toEqual({ count: 2, names: ['a.png', 'b.png'] });
    const one = await send('/api/files/album', { body: form([['photos', png, 'a.png']]) });
    expect(one.json).toEqual({ count: 1, names: ['a.png'] });
    const gif = await send('/api/files/album', {
      body: form([['photos', new Blob(['GIF89a'], { type: 'image/gif' }), 'c.gif']]),
    });
    expect(gif.status).toBe(415);
    expect(gif.json.code).toBe('UNSUPPORTED_MEDIA_TYPE');
    expect(gif.json.detail).toContain('image/gif');
  });

  it("holds each file to its schema's .max() and a form to its file count: 413", async () => {
    const big = new Blob([new Uint8Array(1001)], { type: 'image/png' });
    const tooBig = await send('/api/files/album', { body: form([['photos', big, 'big.png']]) });
    expect(tooBig.status).toBe(413);
    expect(tooBig.json.code).toBe('PAYLOAD_TOO_LARGE');
    // The rest is read on and dropped: the connection stays for the next request.
    expect(tooBig.headers.get('connection')).not.toBe('close');
    const png = new Blob([new Uint8Array(10)], { type: 'image/png' });
    const many = await send('/api/files/album', {
      body: form([1, 2, 3, 4].map((index) => ['photos', png, `${index}.png`] as [string, Blob, string])),
    });
    expect(many.status).toBe(413);
    expect(many.json.detail).toContain('files');
  });

  it('refuses a second file on a one-file field with 400, unless the route takes one file: then 413 comes first', async () => {
    const before = handled;
    const text = new Blob(['hello'], { type: 'text/plain' });
    const twice = await send('/api/files', {
      body: form([
        ['title', 'Two'],
        ['copies', '1'],
        ['file', text, 'a.txt'],
        ['file', text, 'b.txt'],
      ]),
    });
    expect(twice.status).toBe(400);
    expect(twice.json).toMatchObject({ code: 'VALIDATION_FAILED', errors: [{ path: 'file' }] });
    expect(String(twice.json.detail)).toContain('Takes one file');
    const capped = await send('/api/files/single', {
      body: form([
        ['file', text, 'a.txt'],
        ['file', text, 'b.txt'],
      ]),
    });
    expect(capped.status).toBe(413);
    expect(capped.json.code).toBe('PAYLOAD_TOO_LARGE');
    expect(handled).toBe(before);
  });

  it('refuses what is not a form with 415, and a declared length over the total with 413, before anything runs', async () => {
    const before = handled;
    const json = await send('/api/files', {
      headers: { 'content-type': 'application/json' },
      body: '{"title":"x"}',
    });
    expect(json.status).toBe(415);
    const declared = await send('/api/files/album', {
      headers: {
        'content-type': 'multipart/form-data; boundary=x',
        'content-length': String(10 * 1024 * 1024),
      },
      body: new Uint8Array(16),
      ...({ duplex: 'half' } as object),
    }).catch(() => undefined);
    // fetch refuses a Content-Length it cannot send; the socket test below covers a lying one.
    if (declared !== undefined) expect(declared.status).toBe(413);
    expect(handled).toBe(before);
  });

  it('reads nothing for a caller the guards refuse', async () => {
    const before = handled;
    const refused = await send('/api/files/guarded', {
      body: form([['file', new Blob([new Uint8Array(200 * 1024)]), 'x.bin']]),
    });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('connection')).not.toBe('close');
    const allowed = await send('/api/files/guarded', {
      headers: { 'x-allowed': 'yes' },
      body: form([['file', new Blob([new Uint8Array(200 * 1024)]), 'x.bin']]),
    });
    expect(allowed.json).toEqual({ size: 200 * 1024 });
    expect(handled).toBe(before + 1);
  });

  it('takes a raw body as one file, named by Content-Disposition, of an allowed type', async () => {
    const answer = await send('/api/files/raw', {
      headers: {
        'content-type': 'text/plain; charset=utf-8',
        'content-disposition': `attachment; filename="notes.txt"; filename*=UTF-8''%E2%82%AC%20rates.txt`,
      },
      body: 'raw text',
    });
    expect(answer.status).toBe(201);
    expect(answer.json).toEqual({ name: '€ rates.txt', type: 'text/plain', size: 8, text: 'raw text' });
    const unnamed = await send('/api/files/raw', { body: new Uint8Array([1, 2, 3]) });
    expect(unnamed.json).toMatchObject({ name: 'upload', type: 'application/octet-stream', size: 3 });
    const wrongType = await send('/api/files/raw', {
      headers: { 'content-type': 'image/png' },
      body: new Uint8Array([1]),
    });
    expect(wrongType.status).toBe(415);
    const tooBig = await send('/api/files/raw', {
      headers: { 'content-type': 'text/plain' },
      body: 'x'.repeat(2049),
    });
    expect(tooBig.status).toBe(413);
  });

  it("takes an update's data as the raw body, beside the id in its path", async () => {
    const answer = await send('/api/files/abc', {
      method: 'PUT',
      headers: { 'content-type': 'text/plain' },
      body: 'patched',
    });
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({ id: 'abc', size: 7, text: 'patched' });
  });

  it('spools a file past the memory threshold, hands it to the handler whole, and removes it after the answer', async () => {
    const bytes = new Uint8Array(3 * 1024 * 1024).map((_, index) => index % 251);
    const answer = await send('/api/files/echo', { body: form([['file', new Blob([bytes]), 'big.bin']]) });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-length')).toBe(String(bytes.byteLength));
    const echoed = new Uint8Array(await answer.raw.arrayBuffer());
    // Compared as bytes: an element-by-element deep equality of 3 MiB took 18 s.
    expect(echoed.byteLength).toBe(bytes.byteLength);
    expect(Buffer.from(echoed).equals(bytes), 'the echoed bytes differ').toBe(true);
    await eventually(async () => (await spooled()) === 0, 10_000, 'the spooled file removed');
  });

  it('leaves no directory when one part is refused while another is being spooled', async () => {
    for (let round = 0; round < 20; round++) {
      const answer = await send('/api/files/pair', {
        body: form([
          ['small', new Blob([new Uint8Array(100)]), 'small.bin'],
          ['large', new Blob([new Uint8Array(5000)]), 'large.bin'],
        ]),
      });
      expect(answer.status).toBe(413);
    }
    await eventually(async () => (await spooled()) === 0, 10_000, 'every spooled file removed');
  });

  it('holds a raw body of unknown length to the route total', async () => {
    const before = handled;
    const answer = await send('/api/files/capped', {
      headers: { 'content-type': 'application/octet-stream' },
      body: new ReadableStream<Uint8Array>({
        start(stream) {
          stream.enqueue(new Uint8Array(600));
          stream.enqueue(new Uint8Array(600));
          stream.close();
        },
      }),
      ...({ duplex: 'half' } as object),
    });
    expect(answer.status).toBe(413);
    expect(handled).toBe(before);
  });

  it('hands over file names without control characters or directories', async () => {
    const part = (name: string, value: string, disposition = '') =>
      `--b\r\ncontent-disposition: form-data; name="${name}"${disposition}\r\n\r\n${value}\r\n`;
    const named = await send('/api/files', {
      headers: { 'content-type': 'multipart/form-data; boundary=b' },
      body: `${part('title', 'T')}${part('copies', '1')}${part('file', 'x', "; filename*=utf-8''a%00b%0d%0ac.txt")}--b--\r\n`,
    });
    expect(named.json, JSON.stringify(named.json)).toMatchObject({ name: 'abc.txt' });
    const dots = await send('/api/files/raw', {
      headers: { 'content-type': 'text/plain', 'content-disposition': "attachment; filename*=UTF-8''..%00" },
      body: 'x',
    });
    expect(dots.json.name).toBe('upload');
  });

  it.runIf(name === 'app.fetch')('removes an echoed upload when its answer is cancelled unread', async () => {
    const answer = await send('/api/files/echo', {
      body: form([['file', new Blob([new Uint8Array(100_000)]), 'echo.bin']]),
    });
    expect(answer.status).toBe(200);
    await answer.raw.body?.cancel();
    await eventually(async () => (await spooled()) === 0, 10_000, 'the echoed file removed');
  });

  it.runIf(name.startsWith('Node'))(
    'answers 413 before the handler for a declared length over the total, and midway for a body that lies',
    async () => {
      const { hostname, port } = new URL(send.origin as string);
      const exchange = (head: string, body: Buffer | string) =>
        new Promise<string>((resolve, reject) => {
          const socket = connect(Number(port), hostname);
          let text = '';
          // Settled by the whole answer: a refused body may be read on (and the socket held) for a while.
          socket.on('data', (chunk) => {
            text += chunk.toString('latin1');
            const end = text.indexOf('\r\n\r\n');
            const length = Number(/content-length: (\d+)/i.exec(text)?.[1] ?? Number.NaN);
            if (end >= 0 && text.length - end - 4 >= length) {
              resolve(text);
              socket.destroy();
            }
          });
          socket.on('close', () => resolve(text));
          socket.on('error', reject);
          socket.write(head);
          socket.write(body, () => undefined);
        });
      const before = handled;
      const declared = await exchange(
        'POST /api/files/album HTTP/1.1\r\nhost: x\r\ncontent-type: multipart/form-data; boundary=b\r\ncontent-length: 999999999\r\n\r\n',
        '--b\r\n',
      );
      expect(declared).toMatch(/^HTTP\/1\.1 413/);
      expect(declared.toLowerCase()).toContain('connection: close');
      // The form's total, and beside it the largest file a field takes: never only the larger number.
      expect(declared).toContain(
        'The body is 999999999 bytes; this route takes at most 1051576 bytes in all, a file at most 1000 bytes',
      );
      // A chunked form that passes the total (3 files of 1000 bytes + 1 MiB) midway.
      const part = `--b\r\ncontent-disposition: form-data; name="photos"; filename="a.png"\r\ncontent-type: image/png\r\n\r\n`;
      const chunk = Buffer.from(`${part}${'x'.repeat(900)}\r\n`);
      const chunks = Array.from(
        { length: 2000 },
        () => `${chunk.length.toString(16)}\r\n${chunk.toString()}\r\n`,
      ).join('');
      const lying = await exchange(
        'POST /api/files/album HTTP/1.1\r\nhost: x\r\ncontent-type: multipart/form-data; boundary=b\r\ntransfer-encoding: chunked\r\n\r\n',
        chunks,
      );
      expect(lying).toMatch(/^HTTP\/1\.1 413/);
      expect(handled).toBe(before);
    },
  );

  it('leaves no temporary file behind after uploads whose clients leave midway', async () => {
    const bytes = new Uint8Array(512 * 1024);
    for (let round = 0; round < 100; round++) {
      const controller = new AbortController();
      const body = new ReadableStream<Uint8Array>({
        start(stream) {
          const header = new TextEncoder().encode(
            '--b\r\ncontent-disposition: form-data; name="file"; filename="x.bin"\r\n\r\n',
          );
          stream.enqueue(header);
          stream.enqueue(bytes);
          // The client leaves once the server holds a spooled file.
          setTimeout(() => controller.abort(), 20);
        },
      });
      await send('/api/files/echo', {
        headers: { 'content-type': 'multipart/form-data; boundary=b', 'x-allowed': 'yes' },
        body,
        signal: controller.signal,
        ...({ duplex: 'half' } as object),
      }).catch(() => undefined);
    }
    await eventually(async () => (await spooled()) === 0, 10_000, 'every spooled file removed');
  });
});

describe('upload routes that cannot work are refused at start-up', () => {
  const mount = (definition: unknown) =>
    createApp({ logger: false }).mount([procedures('files', definition as never)]);

  it('a file in a GET, a raw file beside path parameters, .uploads() without a file, .idempotent() with files', () => {
    expect(() =>
      mount({
        listFiles: procedure()
          .input(z.object({ file: z.file() }))
          .query(() => []),
      }),
    ).toThrow(/has no body/);
    expect(() =>
      mount({
        upload: procedure()
          .input(z.file())
          .rest({ method: 'POST', path: '/files/:id/raw' })
          .mutation(() => null),
      }),
    ).toThrow(/path has parameters/);
    expect(() =>
      mount({
        createNote: procedure()
          .input(z.object({ text: z.string() }))
          .uploads({ files: 2 })
          .mutation(() => null),
      }),
    ).toThrow(ProceedConfigError);
    expect(() =>
      mount({
        createFile: procedure()
          .input(z.object({ file: z.file() }))
          .idempotent()
          .mutation(() => null),
      }),
    ).toThrow(/idempotent/);
    expect(() => procedure().uploads({ fileSize: -1 })).toThrow(/at least 1/);
    expect(() => procedure().uploads({ filesize: 1 } as never)).toThrow(
      /unknown option "filesize" \(did you mean "fileSize"\?\)/,
    );
    expect(() => procedure().uploads({ memory: -1 })).toThrow(/memory must be a whole number of at least 0/);
    expect(() => createApp({ uploads: { total: 0 } })).toThrow(/at least 1/);
  });
});

describe('the typed client sends files', () => {
  let app: App;
  let origin: string;
  beforeAll(async () => {
    app = buildApp();
    origin = await app.listen({ port: 0, host: '127.0.0.1', handleSignals: false });
  });
  afterAll(() => app.close());

  it('builds the form itself from an input that holds Blobs, and sends a Blob as a raw body with its name', async () => {
    const api = [filesCollection] as const;
    const client = createClient<typeof api>({ baseUrl: origin, routes: routeManifest(app) });
    const created = await client.files.createFile({
      title: 'Report',
      copies: 2,
      file: new File(['über'], 'straße.txt', { type: 'text/plain' }),
    });
    expect(created).toMatchObject({ title: 'Report', copies: 2, name: 'straße.txt', size: 5, text: 'über' });
    const album = await client.files.createAlbum({
      photos: [
        new Blob([new Uint8Array([1])], { type: 'image/png' }),
        new Blob([new Uint8Array([2])], { type: 'image/png' }),
      ],
    });
    expect(album).toEqual({ count: 2, names: ['blob', 'blob'] });
    const raw = await client.files.createRaw(new File(['plain'], 'ünïcode.txt', { type: 'text/plain' }));
    expect(raw).toEqual({ name: 'ünïcode.txt', type: 'text/plain', size: 5, text: 'plain' });
    const updated = await client.files.updateFile({ id: 'x', data: new Blob(['new bytes']) });
    expect(updated).toEqual({ id: 'x', size: 9, text: 'new bytes' });
    const echoed = await client.files.echoFile({ file: new Blob(['round trip']) });
    expect(await echoed.text()).toBe('round trip');
  });
});

describe('an upload refused by the app context on app.fetch', () => {
  it('is answered with its problem, and nothing of the body reaches the handler', async () => {
    const app = createApp({
      logger: false,
      context: (request) => {
        if (request.headers['x-deny'] !== undefined) throw new ForbiddenError('Denied by the context');
        return {};
      },
    }).mount([filesCollection]);
    try {
      const before = handled;
      const answer = await app.fetch(
        new Request('http://api.example/api/files/guarded', {
          method: 'POST',
          headers: { 'x-deny': '1', 'content-type': 'multipart/form-data; boundary=b' },
          body: new ReadableStream<Uint8Array>({
            start(stream) {
              stream.enqueue(new TextEncoder().encode('--b\r\ncontent-disposition: form-data; name="file"'));
              // Never ends: a body that would hang whoever waits for it.
            },
          }),
          ...({ duplex: 'half' } as object),
        }),
      );
      expect(answer.status).toBe(403);
      expect(handled).toBe(before);
    } finally {
      await app.close();
    }
  });
});

describe('uploads and Idempotency-Key', () => {
  it('refuses a key on a create that takes files: a key alone cannot tell two uploads apart', async () => {
    const app = createApp({ logger: false }).mount([filesCollection]);
    await app.register(idempotencyPlugin, { store: new MemoryIdempotencyStore(), creates: true });
    try {
      const send = (key?: string) => {
        const body = new FormData();
        body.append('title', 'T');
        body.append('copies', '1');
        body.append('file', new Blob(['x']), 'x.txt');
        return app.fetch(
          new Request('http://api.example/api/files', {
            method: 'POST',
            headers: key === undefined ? {} : { 'idempotency-key': key },
            body,
          }),
        );
      };
      const keyed = await send('upload-1');
      expect(keyed.status).toBe(400);
      expect(await keyed.text()).toContain('Idempotency-Key');
      expect((await send()).status).toBe(201);
    } finally {
      await app.close();
    }
  });
});
