import { describe, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { notes } from '../../test/fixtures/notes.js';
import { eventStream, serverEvent } from '../core/events.js';
import { download, sendFile } from '../core/files.js';
import { procedure, procedures } from '../core/procedure.js';
import { webSocket } from '../core/sockets.js';
import { cursorPage } from '../pagination/cursor.js';
import { resource } from '../resource/index.js';
import { type Client, type ClientSocket, createClient, type Jsonify } from './index.js';

const api = [notes] as const;
const client = createClient<typeof api>({ baseUrl: 'http://localhost:3030' });

describe('client types from the server collections', () => {
  it('keys the client by collection name and procedure name', () => {
    expectTypeOf(client).toHaveProperty('notes');
    expectTypeOf(client.notes).toHaveProperty('listNotes');
    expectTypeOf(client.notes).toHaveProperty('pinNote');
    // @ts-expect-error: no such collection
    client.posts;
    // @ts-expect-error: no such procedure
    client.notes.listPosts;
  });

  it('takes the client input type (before defaults), with dates as Date', () => {
    type ListInput = Parameters<typeof client.notes.listNotes>[0];
    expectTypeOf<ListInput>().toEqualTypeOf<
      | {
          limit?: number | undefined;
          pinned?: boolean | undefined;
          after?: Date | undefined;
          tags?: Array<'a' | 'b' | 'c'> | undefined;
        }
      | undefined
    >();
  });

  it('allows a call without input when every field is optional', () => {
    expectTypeOf(client.notes.listNotes).toBeCallableWith();
    expectTypeOf(client.notes.listNotes).toBeCallableWith({ limit: 5, tags: ['a'] });
  });

  it('requires the input when a field is required', () => {
    expectTypeOf(client.notes.getNote).toBeCallableWith({ id: '1' });
    // @ts-expect-error: id is required
    client.notes.getNote();
    // @ts-expect-error: id is a string
    client.notes.getNote({ id: 1 });
    // update*: { id, data }
    expectTypeOf(client.notes.updateNote).toBeCallableWith({ id: '1', data: { title: 'x' } });
    // @ts-expect-error: data is required
    client.notes.updateNote({ id: '1' });
  });

  it('returns the JSON form of the output: dates become strings', () => {
    expectTypeOf(client.notes.getNote).returns.resolves.toEqualTypeOf<
      | { id: string; title: string }
      | { id: string; title: string; body: string; ownerId: string; createdAt: string }
    >();
    expectTypeOf(client.notes.createNote).returns.resolves.toEqualTypeOf<{
      id: string;
      title: string;
      body: string;
      ownerId: string;
    }>();
  });

  it('answers { success: true } for a delete without output, null for other empty outputs', () => {
    expectTypeOf(client.notes.deleteNote).returns.resolves.toEqualTypeOf<{ success: true }>();
    const other = procedures('things', {
      createThing: procedure().mutation(() => undefined),
      deleteThing: procedure()
        .input(z.object({ id: z.string() }))
        .mutation(async () => {}),
      deleted: procedure()
        .rest({ method: 'DELETE', path: '/x' })
        .mutation(() => {}),
    });
    const things = createClient<[typeof other]>({ baseUrl: '' }).things;
    expectTypeOf(things.createThing).returns.resolves.toEqualTypeOf<null>();
    expectTypeOf(things.deleteThing).returns.resolves.toEqualTypeOf<{ success: true }>();
    // `deleted` has no conventional prefix, so it is no `delete*`.
    expectTypeOf(things.deleted).returns.resolves.toEqualTypeOf<null>();
  });

  it('infers outputs without a schema from the handler', () => {
    expectTypeOf(client.notes.pinNote).returns.resolves.toEqualTypeOf<{ pinned: number }>();
    expectTypeOf(client.notes.pinNote).parameter(0).toEqualTypeOf<{ id: number }>();
  });

  it('accepts the collections as a record too', () => {
    type FromRecord = Client<{ byAnyKey: typeof notes }>;
    expectTypeOf<FromRecord>().toHaveProperty('notes');
    expectTypeOf<FromRecord['notes']['getNote']>().parameter(0).toEqualTypeOf<{ id: string }>();
  });

  it('takes call options as a second argument', () => {
    expectTypeOf(client.notes.listNotes).toBeCallableWith(undefined, { signal: AbortSignal.timeout(100) });
    expectTypeOf(client.notes.getNote).toBeCallableWith({ id: '1' }, { headers: { 'x-trace': '1' } });
  });
});

describe('Jsonify', () => {
  it('turns dates into strings, drops undefined and functions, keeps nulls', () => {
    expectTypeOf<
      Jsonify<{ at: Date; n?: number | undefined; m: string | undefined; z: null }>
    >().toEqualTypeOf<{
      at: string;
      n?: number;
      m?: string;
      z: null;
    }>();
    expectTypeOf<Jsonify<Date[]>>().toEqualTypeOf<string[]>();
    expectTypeOf<Jsonify<{ nested: { when: Date }[] }>>().toEqualTypeOf<{ nested: { when: string }[] }>();
    expectTypeOf<Jsonify<Record<string, unknown>>>().toEqualTypeOf<{ [key: string]: unknown }>();
  });

  it('gives an object with no key to drop or leave out the same type as one with such a key would', () => {
    const mark: unique symbol = Symbol('mark');
    expectTypeOf<Jsonify<{ readonly a: string; when: Date }>>().toEqualTypeOf<{ a: string; when: string }>();
    expectTypeOf<Jsonify<{ [mark]: number; a: string }>>().toEqualTypeOf<{ a: string }>();
    expectTypeOf<Jsonify<{ readonly a: string; b?: number }>>().toEqualTypeOf<{ a: string; b?: number }>();
  });
});

describe('a 204 procedure', () => {
  const marks = procedures('marks', {
    markRead: procedure()
      .rest({ method: 'PUT', path: '/marks/:id/read', status: 204 })
      .input(z.object({ id: z.string() }))
      .mutation(() => ({ dropped: true })),
    readMark: procedure()
      .rest({ method: 'GET', path: '/marks/:id', status: 200 })
      .input(z.object({ id: z.string() }))
      .query(() => ({ read: true })),
  });
  const marksClient = createClient<[typeof marks]>({ baseUrl: 'http://localhost:3030' });

  it('resolves to undefined, whatever its handler returns; another status keeps the output', () => {
    expectTypeOf(marksClient.marks.markRead).returns.resolves.toEqualTypeOf<undefined>();
    expectTypeOf(marksClient.marks.readMark).returns.resolves.toEqualTypeOf<{ read: boolean }>();
  });
});

describe('a procedure that chooses among statuses', () => {
  const bookmarks = procedures('bookmarks', {
    saveBookmark: procedure()
      .rest({ method: 'PUT', path: '/bookmarks/:id', status: [200, 201] })
      .input(z.object({ id: z.string() }))
      .output(z.object({ id: z.string(), savedAt: z.date() }))
      .mutation(({ input }) => ({ id: input.id, savedAt: new Date() })),
    deleteBookmark: procedure()
      .rest({ status: [200, 204] })
      .input(z.object({ id: z.string() }))
      .output(z.object({ id: z.string() }))
      .mutation(({ input }) => ({ id: input.id })),
  });
  const typed = createClient<[typeof bookmarks]>({ baseUrl: 'http://localhost:3030' });

  it('resolves to a union discriminated by status', async () => {
    const saved = await typed.bookmarks.saveBookmark({ id: 'a' });
    expectTypeOf(saved).toEqualTypeOf<
      | { status: 200; data: { id: string; savedAt: string } }
      | { status: 201; data: { id: string; savedAt: string } }
    >();
    const removed = await typed.bookmarks.deleteBookmark({ id: 'a' });
    if (removed.status === 204) expectTypeOf(removed.data).toEqualTypeOf<undefined>();
    else expectTypeOf(removed.data).toEqualTypeOf<{ id: string }>();
  });
});

describe('file answers', () => {
  it('types a procedure declared with .output(download()) as a File', () => {
    const files = procedures('files', {
      getFile: procedure()
        .input(z.object({ id: z.string() }))
        .output(download())
        .query(() => sendFile(new Uint8Array(1), { type: 'application/octet-stream' })),
    });
    const client = createClient<readonly [typeof files]>({ baseUrl: 'http://x' });
    expectTypeOf(client.files.getFile).returns.resolves.toEqualTypeOf<File>();
  });

  it('refuses a handler that returns anything but a file where one is declared', () => {
    procedure()
      .output(download())
      // @ts-expect-error: a download's handler returns sendFile(…) or fileAt(…)
      .query(() => ({ id: '1' }));
  });
});

describe('uploads', () => {
  const uploads = procedures('uploads', {
    createUpload: procedure()
      .input(z.object({ title: z.string(), file: z.file(), extras: z.array(z.file()).optional() }))
      .mutation(({ input }) => {
        expectTypeOf(input.file).toEqualTypeOf<File>();
        return { size: input.file.size };
      }),
    createRawUpload: procedure()
      .input(z.file())
      .mutation(({ input }) => ({ size: input.size })),
  });
  const client = createClient<readonly [typeof uploads]>({ baseUrl: 'http://x' });

  it('takes any Blob where the server takes a File, in a field, an array or as the whole input', () => {
    expectTypeOf(client.uploads.createUpload)
      .parameter(0)
      .toEqualTypeOf<{ title: string; file: Blob; extras?: Blob[] | undefined }>();
    expectTypeOf(client.uploads.createRawUpload).parameter(0).toEqualTypeOf<Blob>();
  });

  it('refuses what is not a file where a file is due', () => {
    // @ts-expect-error: a file field takes a Blob, not text
    void client.uploads.createUpload({ title: 't', file: 'not a file' });
    // @ts-expect-error: a raw upload takes a Blob
    void client.uploads.createRawUpload({ size: 1 });
  });
});

describe('event streams', () => {
  const Tick = z.object({ n: z.number(), at: z.date() });
  const ticks = procedures('ticks', {
    tickEvents: procedure()
      .rest({ method: 'GET', path: '/ticks' })
      .output(eventStream(Tick))
      .query(async function* ({ lastEventId, signal }) {
        expectTypeOf(lastEventId).toEqualTypeOf<string | undefined>();
        expectTypeOf(signal).toEqualTypeOf<AbortSignal>();
        yield { n: 1, at: new Date() };
        yield serverEvent({ n: 2, at: new Date() }, { id: 2 });
      }),
  });

  it('types the call as an async iterable of the events’ data, as JSON', () => {
    const client = createClient<readonly [typeof ticks]>({ baseUrl: 'http://x' });
    expectTypeOf(client.ticks.tickEvents).returns.resolves.toEqualTypeOf<
      AsyncIterable<{ n: number; at: string }>
    >();
  });

  it('refuses an event the schema does not describe', () => {
    procedure()
      .output(eventStream(Tick))
      // @ts-expect-error: n must be a number
      .query(async function* () {
        yield { n: 'one', at: new Date() };
      });
  });
});

describe('views chosen per record', () => {
  interface Ctx {
    user?: { id: string };
  }
  const Note = resource(
    'Note',
    {
      public: { id: z.string(), title: z.string() },
      owner: { body: z.string() },
      admin: { createdAt: z.date() },
    },
    { owner: (note: { ownerId: string }, ctx: Ctx) => note.ownerId === ctx.user?.id },
  );
  const notesApi = procedures('notes', {
    listNotes: procedure<Ctx>()
      .output(cursorPage(Note.perRecord))
      .query(() => ({ data: [], nextCursor: null, prevCursor: null })),
  });

  it('types each item as one of the views it may come in, to narrow on', async () => {
    const client = createClient<readonly [typeof notesApi]>({ baseUrl: 'http://x' });
    type Item = Awaited<ReturnType<typeof client.notes.listNotes>>['data'][number];
    expectTypeOf<Item>().toEqualTypeOf<
      | { id: string; title: string }
      | { id: string; title: string; body: string }
      | { id: string; title: string; body: string; createdAt: string }
    >();
    const page = await client.notes.listNotes();
    const first = page.data[0];
    if (first !== undefined && 'body' in first) expectTypeOf(first.body).toEqualTypeOf<string>();
  });
});

describe('a socket procedure on the client', () => {
  const Said = z.object({ text: z.string().trim().min(1), room: z.string().default('lobby') });
  const Echoed = z.object({ text: z.string(), at: z.date() });
  const rooms = procedures('rooms', {
    roomSocket: procedure()
      .rest({ method: 'GET', path: '/rooms/:room/socket' })
      .input(z.object({ room: z.string() }))
      .output(webSocket({ receive: Said, send: Echoed }))
      .query(async function* ({ messages }) {
        for await (const said of messages) yield { text: said.text, at: new Date() };
      }),
  });
  const socketClient = createClient<[typeof rooms]>({ baseUrl: 'http://localhost:3030' });

  it('answers a socket that sends what receive takes and iterates what send writes, as JSON', async () => {
    const socket = await socketClient.rooms.roomSocket({ room: 'a' });
    expectTypeOf(socket).toEqualTypeOf<
      ClientSocket<{ text: string; room?: string | undefined }, { text: string; at: string }>
    >();
    expectTypeOf(socket.send).parameter(0).toEqualTypeOf<{ text: string; room?: string | undefined }>();
    for await (const message of socket) expectTypeOf(message).toEqualTypeOf<{ text: string; at: string }>();
    // @ts-expect-error: a message of the wrong shape
    await socket.send({ body: 'x' });
  });

  it('leaves other outputs alone, any included', () => {
    const anyOut = procedures('loose', {
      getLoose: procedure()
        .input(z.object({ id: z.string() }))
        // biome-ignore lint/suspicious/noExplicitAny: an app's loosely typed handler, what this test is about
        .query((): any => ({})),
    });
    const loose = createClient<[typeof anyOut]>({ baseUrl: 'http://localhost:3030' });
    type Loose = Awaited<ReturnType<typeof loose.loose.getLoose>>;
    expectTypeOf<Loose>().toBeAny();
  });

  it('resolves a handler that always throws to never', () => {
    const odd = procedures('odd', {
      getGone: procedure().query((): never => {
        throw new Error('gone');
      }),
      deleteGone: procedure().mutation((): never => {
        throw new Error('gone');
      }),
    });
    const client = createClient<[typeof odd]>({ baseUrl: 'http://localhost:3030' });
    expectTypeOf(client.odd.getGone).returns.resolves.toBeNever();
    expectTypeOf(client.odd.deleteGone).returns.resolves.toBeNever();
  });
});
