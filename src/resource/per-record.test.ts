import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { eventStream } from '../core/events.js';
import { compileSerializer } from '../core/output.js';
import { procedure, procedures } from '../core/procedure.js';
import { generateOpenApi } from '../openapi/generate.js';
import { cursorPage } from '../pagination/cursor.js';
import { createApp } from '../server/create-app.js';
import { resource } from './index.js';

interface NoteRow {
  id: string;
  title: string;
  summary: string;
  body: string;
  ownerId: string;
  secret: string;
  createdAt: Date;
}
interface Ctx {
  user?: { id: string; role: 'user' | 'admin' };
}

const Note = resource(
  'Note',
  {
    public: { id: z.string(), title: z.string() },
    authenticated: { summary: z.string() },
    owner: { body: z.string() },
    admin: { createdAt: z.date() },
  },
  {
    owner: (note: NoteRow, ctx: Ctx) => note.ownerId === ctx.user?.id,
    admin: (ctx: Ctx) => ctx.user?.role === 'admin',
  },
);

const createdAt = new Date('2026-11-27T10:00:00.000Z');
const row = (id: string, ownerId: string): NoteRow => ({
  id,
  title: `Note ${id}`,
  summary: `Summary ${id}`,
  body: `Body ${id}`,
  ownerId,
  secret: 'never shown',
  createdAt,
});
const rows = [row('1', 'ada'), row('2', 'bob'), row('3', 'ada')];

const users: Record<string, NonNullable<Ctx['user']>> = {
  ada: { id: 'ada', role: 'user' },
  bob: { id: 'bob', role: 'user' },
  root: { id: 'root', role: 'admin' },
};

const p = procedure<Ctx>;
const notes = procedures('notes', {
  listNotes: p()
    .output(cursorPage(Note.perRecord))
    .query(() => ({ data: rows, nextCursor: null, prevCursor: '1' })),
  noteEvents: p()
    .rest({ method: 'GET', path: '/notes/events' })
    .output(eventStream(Note.perRecord))
    .query(async function* () {
      yield* rows;
    }),
  getNote: p()
    .input(z.object({ id: z.string() }))
    .output(Note.perRecord)
    .query(({ input }) => rows.find((note) => note.id === input.id) ?? row(input.id, 'nobody')),
});

function blogApp() {
  return createApp<Ctx>({
    logger: false,
    context: (request) => {
      const name = request.headers['x-user'];
      const user = typeof name === 'string' ? users[name] : undefined;
      return user === undefined ? {} : { user };
    },
  }).mount([notes]);
}

const app = blogApp();
afterAll(() => app.close());

const publicView = (note: NoteRow) => ({ id: note.id, title: note.title });
const authenticatedView = (note: NoteRow) => ({ ...publicView(note), summary: note.summary });
const ownerView = (note: NoteRow) => ({ ...authenticatedView(note), body: note.body });
const adminView = (note: NoteRow) => ({ ...ownerView(note), createdAt: createdAt.toISOString() });

async function list(user: string | undefined, target: 'node' | 'fetch'): Promise<unknown> {
  const headers: Record<string, string> = user === undefined ? {} : { 'x-user': user };
  if (target === 'node') return (await app.inject({ url: '/api/notes', headers })).json();
  return (await app.fetch(new Request('http://api.example/api/notes', { headers }))).json();
}

describe('views chosen per record', () => {
  for (const target of ['node', 'fetch'] as const) {
    it(`shows each item of a list in its caller's view (${target === 'node' ? 'Fastify' : 'app.fetch'})`, async () => {
      expect(await list(undefined, target)).toEqual({
        data: rows.map(publicView),
        nextCursor: null,
        prevCursor: '1',
      });
      // Ada owns notes 1 and 3: their bodies, and only theirs.
      expect(await list('ada', target)).toEqual({
        data: [
          ownerView(rows[0] as NoteRow),
          authenticatedView(rows[1] as NoteRow),
          ownerView(rows[2] as NoteRow),
        ],
        nextCursor: null,
        prevCursor: '1',
      });
      expect(await list('bob', target)).toEqual({
        data: [
          authenticatedView(rows[0] as NoteRow),
          ownerView(rows[1] as NoteRow),
          authenticatedView(rows[2] as NoteRow),
        ],
        nextCursor: null,
        prevCursor: '1',
      });
      expect(await list('root', target)).toEqual({
        data: rows.map(adminView),
        nextCursor: null,
        prevCursor: '1',
      });
    });
  }

  it('chooses for a single record too, and never writes a field no view declares', async () => {
    const own = await app.inject({ url: '/api/notes/2', headers: { 'x-user': 'bob' } });
    expect(own.json()).toEqual(ownerView(rows[1] as NoteRow));
    const other = await app.inject({ url: '/api/notes/2', headers: { 'x-user': 'ada' } });
    expect(other.json()).toEqual(authenticatedView(rows[1] as NoteRow));
    expect(other.body).not.toContain('never shown');
  });

  it('chooses per event in a stream of records', async () => {
    const response = await app.inject({ url: '/api/notes/events', headers: { 'x-user': 'ada' } });
    // Each event's data, the stream's own `end` event left out.
    const data = response.body
      .split('\n\n')
      .filter((frame) => frame.startsWith('data: '))
      .map((frame) => JSON.parse(frame.slice('data: '.length)));
    expect(response.body.endsWith('event: end\ndata: {}\n\n')).toBe(true);
    expect(data).toEqual([
      ownerView(rows[0] as NoteRow),
      authenticatedView(rows[1] as NoteRow),
      ownerView(rows[2] as NoteRow),
    ]);
  });

  it('answers 500, not a thinner view, when a record lacks a field its view requires', async () => {
    const serialize = compileSerializer(Note.perRecord);
    const { body: _body, ...bodiless } = row('9', 'ada');
    expect(() => serialize(bodiless, { user: users.ada })).toThrow('"body" is required in the owner view');
    // The same record, to someone it shows less, is fine.
    expect(JSON.parse(serialize(bodiless, { user: users.bob }) as string)).toEqual(
      authenticatedView(row('9', 'ada')),
    );
  });

  it('writes only the chosen view, whatever else a record holds (property)', () => {
    const serialize = compileSerializer(z.object({ data: z.array(Note.perRecord) }));
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            id: fc.string(),
            title: fc.string(),
            summary: fc.string(),
            body: fc.string(),
            ownerId: fc.constantFrom('ada', 'bob'),
            createdAt: fc.constant(createdAt),
            extra: fc.dictionary(fc.string(), fc.string()),
          }),
          { maxLength: 5 },
        ),
        fc.constantFrom(undefined, 'ada', 'bob', 'root'),
        (records, name) => {
          const user = name === undefined ? undefined : users[name];
          const ctx: Ctx = user === undefined ? {} : { user };
          const written = JSON.parse(
            serialize({ data: records.map((r) => ({ ...r.extra, ...r })) }, ctx) as string,
          );
          const expected = records.map((record) => {
            const note = { ...record, secret: '' } as NoteRow;
            const level = Note.levelOf(note, ctx);
            return {
              public: publicView,
              authenticated: authenticatedView,
              owner: ownerView,
              admin: adminView,
            }[level](note);
          });
          expect(written).toEqual({ data: expected });
        },
      ),
    );
  });

  it('is refused where a record cannot be found before writing: inside a union', () => {
    expect(() => compileSerializer(z.union([z.object({ one: Note.perRecord }), z.string()]))).toThrow(
      'A per-record view at the top sits inside a union',
    );
  });

  it('keeps a level that adds no field out of the choice: its callers see the level below', async () => {
    const Plain = resource(
      'Plain',
      { public: { id: z.string() }, owner: { mine: z.boolean() } },
      { owner: (record: { ownerId: string }, ctx: Ctx) => record.ownerId === ctx.user?.id },
    );
    const serialize = compileSerializer(Plain.perRecord);
    const record = { id: 'x', mine: true, ownerId: 'ada' };
    expect(JSON.parse(serialize(record, { user: users.bob }) as string)).toEqual({ id: 'x' });
    expect(JSON.parse(serialize(record, { user: users.ada }) as string)).toEqual({ id: 'x', mine: true });
  });

  it('refuses owner fields without an owner', () => {
    expect(() => resource('Loose', { public: { id: z.string() }, owner: { mine: z.boolean() } })).toThrow(
      'Resource Loose: owner fields (mine) need an owner',
    );
  });

  it('is documented in OpenAPI as anyOf the views, the owner view a component of its own', () => {
    const document = generateOpenApi({
      mounts: [{ prefix: '/api', collections: [notes] }],
      info: { title: 'Notes', version: '1' },
    });
    const get = document.paths['/api/notes/{id}']?.get as {
      responses: Record<string, { content: Record<string, { schema: unknown }> }>;
    };
    expect(get.responses['200']?.content['application/json']?.schema).toEqual({
      anyOf: ['NotePublic', 'NoteAuthenticated', 'NoteOwner', 'NoteAdmin'].map((name) => ({
        $ref: `#/components/schemas/${name}`,
      })),
    });
    const schemas = document.components?.schemas as Record<
      string,
      { properties: object; required: string[] }
    >;
    expect(Object.keys(schemas.NoteOwner?.properties ?? {})).toEqual(['id', 'title', 'summary', 'body']);
    expect(schemas.NoteOwner?.required).toEqual(['id', 'title', 'summary', 'body']);
  });
});
