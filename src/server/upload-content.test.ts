/**
 * Uploads checked by content (docs/uploads.md, "Checked by content") on both adapters: forms and
 * raw bodies, the app's option and a procedure's, refused at the first bytes.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { jpegBytes, pngBytes } from '../../test/fixtures/images.js';
import { ProceedConfigError } from '../core/errors.js';
import { procedure, procedures } from '../core/procedure.js';
import type { App } from './app.js';
import { createApp } from './create-app.js';

let handled = 0;

const described = (file: File) => {
  handled += 1;
  return { name: file.name, type: file.type, size: file.size };
};

const photos = procedures('photos', {
  createPhoto: procedure()
    .input(
      z.object({
        photo: z.file().mime(['image/png']),
        scans: z.array(z.file().mime(['image/png', 'image/jpeg'])).optional(),
      }),
    )
    .mutation(({ input }) => ({ photo: described(input.photo), scans: (input.scans ?? []).map(described) })),
  createSheet: procedure()
    .input(z.object({ sheet: z.file().mime(['text/csv', 'image/png']) }))
    .rest({ method: 'POST', path: '/photos/sheets' })
    .mutation(({ input }) => described(input.sheet)),
  createUnchecked: procedure()
    .input(z.object({ photo: z.file().mime(['image/png']) }))
    .uploads({ checkContent: false })
    .rest({ method: 'POST', path: '/photos/unchecked' })
    .mutation(({ input }) => described(input.photo)),
  createRaw: procedure()
    .input(z.file().mime(['image/png']))
    .rest({ method: 'POST', path: '/photos/raw' })
    .mutation(({ input }) => described(input)),
  updatePhoto: procedure()
    .input(z.object({ id: z.string(), data: z.file().mime(['image/png', 'image/jpeg']) }))
    .mutation(({ input }) => described(input.data)),
});

function buildApp(): App {
  return createApp({ logger: false, uploads: { checkContent: true, memory: 1024 } }).mount([photos]);
}

const form = (entries: [string, Blob, string][]) => {
  const body = new FormData();
  for (const [name, value, filename] of entries) body.append(name, value, filename);
  return body;
};

const note = new TextEncoder().encode('A note, not a picture.\n'.repeat(100));

type Send = (
  method: string,
  path: string,
  init: RequestInit,
) => Promise<{ status: number; json: Record<string, unknown> }>;

const adapters: { name: string; start: (app: App) => Promise<{ send: Send; origin?: string }> }[] = [
  {
    name: 'Node (Fastify, a real socket)',
    async start(app) {
      const origin = await app.listen({ port: 0, host: '127.0.0.1', handleSignals: false });
      return {
        origin,
        send: async (method, path, init) => {
          const answer = await fetch(`${origin}${path}`, { method, ...init });
          return { status: answer.status, json: (await answer.json()) as Record<string, unknown> };
        },
      };
    },
  },
  {
    name: 'app.fetch',
    async start(app) {
      return {
        send: async (method, path, init) => {
          const answer = await app.fetch(new Request(`http://api.example${path}`, { method, ...init }));
          return { status: answer.status, json: (await answer.json()) as Record<string, unknown> };
        },
      };
    },
  },
];

describe.each(adapters)('uploads checked by content on $name', ({ start }) => {
  let app: App;
  let send: Send;
  beforeAll(async () => {
    app = buildApp();
    ({ send } = await start(app));
  });
  afterAll(() => app.close());

  it('takes a PNG declared image/png, and a JPEG declared image/png where the field takes both', async () => {
    const answer = await send('POST', '/api/photos', {
      body: form([
        ['photo', new Blob([pngBytes()], { type: 'image/png' }), 'dot.png'],
        ['scans', new Blob([jpegBytes()], { type: 'image/png' }), 'scan.png'],
      ]),
    });
    expect(answer.status).toBe(201);
    expect(answer.json).toEqual({
      photo: { name: 'dot.png', type: 'image/png', size: pngBytes().byteLength },
      scans: [{ name: 'scan.png', type: 'image/png', size: jpegBytes().byteLength }],
    });
  });

  it('refuses text or a JPEG declared image/png with 415, naming the field and both types; the handler never runs', async () => {
    const before = handled;
    const text = await send('POST', '/api/photos', {
      body: form([['photo', new Blob([note], { type: 'image/png' }), 'note.png']]),
    });
    expect(text.status).toBe(415);
    expect(text.json).toMatchObject({
      code: 'UNSUPPORTED_MEDIA_TYPE',
      detail:
        'The file "photo" is declared image/png, but its content is text (text/plain); the field takes image/png',
    });
    const jpeg = await send('POST', '/api/photos', {
      body: form([['photo', new Blob([jpegBytes()], { type: 'image/png' }), 'photo.png']]),
    });
    expect(jpeg.status).toBe(415);
    expect(jpeg.json.detail).toBe(
      'The file "photo" is declared image/png, but its content is image/jpeg; the field takes image/png',
    );
    expect(handled).toBe(before);
  });

  it('takes a part whose type has no signature as it is (a CSV whose first cell reads like a BMP)', async () => {
    const csv = new TextEncoder().encode('BMW,3 Series\nAudi,A4\n');
    const answer = await send('POST', '/api/photos/sheets', {
      body: form([['sheet', new Blob([csv], { type: 'text/csv' }), 'cars.csv']]),
    });
    expect(answer.status).toBe(201);
    expect(answer.json).toMatchObject({ name: 'cars.csv', type: 'text/csv' });
    // The same field's signed type is still checked.
    const refused = await send('POST', '/api/photos/sheets', {
      body: form([['sheet', new Blob([csv], { type: 'image/png' }), 'cars.png']]),
    });
    expect(refused.status).toBe(415);
  });

  it("leaves the content unchecked where a procedure's .uploads({ checkContent: false }) turns the app's off", async () => {
    const answer = await send('POST', '/api/photos/unchecked', {
      body: form([['photo', new Blob([note], { type: 'image/png' }), 'note.png']]),
    });
    expect(answer.status).toBe(201);
  });

  it("checks a raw body, and an update's data, against the request's Content-Type", async () => {
    const png = await send('POST', '/api/photos/raw', {
      headers: { 'content-type': 'image/png' },
      body: pngBytes(),
    });
    expect(png.status).toBe(201);
    const text = await send('POST', '/api/photos/raw', {
      headers: { 'content-type': 'image/png' },
      body: note,
    });
    expect(text.status).toBe(415);
    expect(text.json.detail).toBe(
      'The body is declared image/png, but its content is text (text/plain); this route takes image/png',
    );
    const jpeg = await send('PUT', '/api/photos/p1', {
      headers: { 'content-type': 'image/jpeg' },
      body: jpegBytes(),
    });
    expect(jpeg.status).toBe(200);
    const pdf = await send('PUT', '/api/photos/p1', {
      headers: { 'content-type': 'image/jpeg' },
      body: new TextEncoder().encode('%PDF-1.7\n%\u00e2\u00e3\n1 0 obj\n<<>>\nendobj\n'),
    });
    expect(pdf.status).toBe(415);
    expect(pdf.json.detail).toContain('its content is application/pdf');
  });
});

describe('a file refused by its content', () => {
  const size = 8 * 1024 * 1024;
  const chunk = new TextEncoder().encode('x'.repeat(64 * 1024));

  it('is refused at its first bytes on app.fetch, and the rest is read on and dropped', async () => {
    const app = buildApp();
    let pulled = 0;
    let ended!: () => void;
    const drained = new Promise<void>((resolve) => {
      ended = resolve;
    });
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled += 1;
        if (pulled * chunk.byteLength > size) {
          controller.close();
          ended();
        } else controller.enqueue(chunk);
      },
    });
    const answer = await app.fetch(
      new Request('http://api.example/api/photos/raw', {
        method: 'POST',
        headers: { 'content-type': 'image/png' },
        body,
        ...({ duplex: 'half' } as object),
      }),
    );
    expect(answer.status).toBe(415);
    // A client still sending reads its answer: the rest is read and dropped (docs/uploads.md, "A refused body").
    await drained;
    await app.close();
  });

  it('is answered on Node while the client is still sending it, which may then send the rest and reuse the connection', async () => {
    const app = buildApp();
    const origin = new URL(await app.listen({ port: 0, host: '127.0.0.1', handleSignals: false }));
    const socket = connect({ host: origin.hostname, port: Number(origin.port) });
    let received = '';
    const answered = (count: number) =>
      new Promise<void>((resolve) => {
        const check = () => {
          if (received.split('HTTP/1.1 ').length > count) {
            socket.off('data', check);
            resolve();
          }
        };
        socket.on('data', check);
      });
    socket.on('data', (data: Buffer) => {
      received += data.toString('latin1');
    });
    socket.on('error', () => undefined);
    const refused = answered(1);
    socket.write(
      `POST /api/photos/raw HTTP/1.1\r\nhost: ${origin.host}\r\ncontent-type: image/png\r\ncontent-length: ${size}\r\n\r\n`,
    );
    // One chunk of the 8 MiB announced: the answer comes without the rest.
    socket.write(chunk);
    await refused;
    expect(received).toMatch(/^HTTP\/1\.1 415 /);
    expect(received.toLowerCase()).not.toContain('connection: close');
    for (let sent = chunk.byteLength; sent < size; sent += chunk.byteLength) socket.write(chunk);
    const next = answered(2);
    socket.write(`GET /api/health HTTP/1.1\r\nhost: ${origin.host}\r\n\r\n`);
    await next;
    expect(received.split('HTTP/1.1 ')[2]).toMatch(/^200 /);
    socket.destroy();
    await app.close();
  });
});

describe('checkContent at start-up', () => {
  it('is refused on a procedure none of whose files declares .mime(), and when it is no boolean', () => {
    expect(() =>
      createApp({ logger: false }).mount([
        procedures('files', {
          createFile: procedure()
            .input(z.object({ file: z.file() }))
            .uploads({ checkContent: true })
            .mutation(() => null),
        }),
      ]),
    ).toThrow(
      /files\.createFile sets \.uploads\(\{ checkContent: true \}\) but none of its files declares \.mime\(\)/,
    );
    expect(() => procedure().uploads({ checkContent: 'yes' } as never)).toThrow(ProceedConfigError);
    expect(() => createApp({ uploads: { checkContent: 1 } as never })).toThrow(
      /checkContent is true or false/,
    );
  });
});
