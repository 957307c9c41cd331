/**
 * Idempotency-Key: one store suite run against memory, PGlite and a PostgreSQL server (when
 * reachable), then the behaviour of an app over HTTP, two instances sharing one PostgreSQL store.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { PGlite } from '@electric-sql/pglite';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it, onTestFinished, vi } from 'vitest';
import { z } from 'zod';
import { guard } from '../core/guards.js';
import { type IdempotencyStore, MemoryIdempotencyStore, type StoredAnswer } from '../core/idempotency.js';
import { procedure, procedures } from '../core/procedure.js';
import type { OpenApiOperation } from '../openapi/types.js';
import type { App } from '../server/app.js';
import { createApp } from '../server/create-app.js';
import { idempotencyPlugin } from './plugin.js';
import { PostgresIdempotencyStore } from './postgres.js';

const suffix = () => randomBytes(6).toString('hex');
const answer: StoredAnswer = {
  status: 201,
  body: '{"id":"1"}',
  location: '/api/notes/1',
  version: undefined,
};
const entry = (fingerprint = 'f1', ms = { lock: 60_000, ttl: 86_400_000 }) => ({
  fingerprint,
  claim: randomUUID(),
  lockedUntil: Date.now() + ms.lock,
  expiresAt: Date.now() + ms.ttl,
});

interface StoreHarness {
  store: IdempotencyStore;
  count: () => Promise<number>;
  close: () => Promise<void>;
}

function storeSuite(name: string, open: () => Promise<StoreHarness>, skip = false) {
  describe.skipIf(skip)(`${name} idempotency store`, () => {
    let harness: StoreHarness;
    beforeAll(async () => {
      harness = await open();
    });
    afterAll(async () => harness?.close());

    it('lets one claim of a free key through, then reports it running, then its answer', async () => {
      const { store } = harness;
      const key = `k-${suffix()}`;
      const first = entry();
      expect(await store.claim(key, first)).toEqual({ claimed: true });
      expect(await store.claim(key, entry('f2'))).toEqual({
        claimed: false,
        fingerprint: 'f1',
        answer: undefined,
      });
      await store.complete(key, first.claim, answer);
      expect(await store.claim(key, entry())).toEqual({ claimed: false, fingerprint: 'f1', answer });
    });

    it('of twenty simultaneous claims of one key, lets exactly one through', async () => {
      const key = `k-${suffix()}`;
      const results = await Promise.all(Array.from({ length: 20 }, () => harness.store.claim(key, entry())));
      expect(results.filter((result) => result.claimed)).toHaveLength(1);
    });

    it('frees a released key, but only for the claim that holds it', async () => {
      const { store } = harness;
      const key = `k-${suffix()}`;
      const first = entry();
      await store.claim(key, first);
      await store.release(key, 'someone else');
      expect((await store.claim(key, entry())).claimed).toBe(false);
      await store.release(key, first.claim);
      expect((await store.claim(key, entry('f3'))).claimed).toBe(true);
    });

    it('lets a key be claimed again once its lock ran out without an answer, or it expired', async () => {
      const { store } = harness;
      const stuck = `k-${suffix()}`;
      const dead = entry('f1', { lock: -1, ttl: 60_000 });
      await store.claim(stuck, dead);
      const taken = entry('f2');
      expect(await store.claim(stuck, taken)).toEqual({ claimed: true });
      // The dead request's late answer does not overwrite the new holder's.
      await store.complete(stuck, dead.claim, answer);
      expect(await store.claim(stuck, entry())).toEqual({
        claimed: false,
        fingerprint: 'f2',
        answer: undefined,
      });

      const old = `k-${suffix()}`;
      const expired = entry('f1', { lock: 60_000, ttl: -1 });
      await store.claim(old, expired);
      await store.complete(old, expired.claim, answer);
      expect(await store.claim(old, entry('f4'))).toEqual({ claimed: true });
    });

    it('prunes expired entries', async () => {
      const { store } = harness;
      const before = await harness.count();
      const expired = entry('f1', { lock: -1, ttl: -1 });
      await store.claim(`k-${suffix()}`, expired);
      await store.claim(`k-${suffix()}`, entry());
      expect(await harness.count()).toBe(before + 2);
      await store.prune();
      expect(await harness.count()).toBeLessThanOrEqual(before + 1);
    });
  });
}

storeSuite('memory', async () => {
  const store = new MemoryIdempotencyStore();
  return { store, count: async () => store.size, close: async () => {} };
});

storeSuite('PGlite', async () => {
  const db = new PGlite();
  const store = new PostgresIdempotencyStore(db, { table: 'keys' });
  return {
    store,
    count: async () => (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM keys')).rows[0]?.n ?? 0,
    close: () => db.close(),
  };
});

const postgresUrl = inject('postgresUrl');

/** A pool on the PostgreSQL server, in a schema of its own that `close` drops. */
async function postgresSchema() {
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({ connectionString: postgresUrl as string, max: 8 });
  const schema = `proceed_idem_${suffix()}`;
  await pool.query(`CREATE SCHEMA ${schema}`);
  return {
    pool,
    table: `${schema}.keys`,
    close: async () => {
      await pool.query(`DROP SCHEMA ${schema} CASCADE`);
      await pool.end();
    },
  };
}

storeSuite(
  'PostgreSQL',
  async () => {
    const { pool, table, close } = await postgresSchema();
    const store = new PostgresIdempotencyStore(pool, { table });
    // Two instances creating the table at once must both succeed.
    await Promise.all([store.ensureSchema(), new PostgresIdempotencyStore(pool, { table }).ensureSchema()]);
    return {
      store,
      count: async () =>
        (await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`)).rows[0]?.n ?? 0,
      close,
    };
  },
  postgresUrl === null,
);

/**
 * Notes whose creation can be held open (`hold()`), so that requests overlap; counts handler
 * runs. `hold()` resolves once a create is held, with the function that lets it finish.
 */
function notesApi() {
  const created: { id: string; title: string }[] = [];
  const caller = z.object({ title: z.string().min(1) });
  let held: ((release: () => void) => void) | undefined;
  const hold = () =>
    new Promise<() => void>((resolve) => {
      held = resolve;
    });
  const notes = procedures('notes', {
    createNote: procedure()
      .input(caller)
      .mutation(async ({ input }) => {
        const holding = held;
        held = undefined;
        if (holding !== undefined) await new Promise<void>((resolve) => holding(resolve));
        const note = { id: String(created.length + 1), title: input.title };
        created.push(note);
        return note;
      }),
    pinNote: procedure()
      .idempotent()
      .input(z.object({ id: z.string() }))
      .rest({ method: 'POST', path: '/notes/:id/pin' })
      .mutation(({ input }) => ({ id: input.id, pinned: true })),
    archiveNote: procedure()
      .input(z.object({ id: z.string() }))
      .rest({ method: 'POST', path: '/notes/:id/archive' })
      .mutation(({ input }) => ({ id: input.id, archived: true })),
  });
  return { notes, created, hold };
}

const apps: App[] = [];
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
});

async function appWith(
  store: IdempotencyStore,
  options: { creates?: boolean; ttl?: number; lockTimeout?: number } = {},
) {
  const { notes, created, hold } = notesApi();
  const app = createApp({ logger: false }).mount([notes]);
  await app.register(idempotencyPlugin, {
    store,
    creates: options.creates ?? true,
    ...(options.ttl === undefined ? {} : { ttl: options.ttl }),
    ...(options.lockTimeout === undefined ? {} : { lockTimeout: options.lockTimeout }),
  });
  apps.push(app);
  return { app, created, hold };
}

const post = (app: App, url: string, payload: object, headers: Record<string, string> = {}) =>
  app.inject({ method: 'POST', url, payload, headers });

describe('Idempotency-Key over HTTP', () => {
  it('takes the store from a function once the app gets ready, and never on an inspected app', async () => {
    const { notes, created } = notesApi();
    let asked = 0;
    const app = createApp({ logger: false }).mount([notes]);
    await app.register(idempotencyPlugin, {
      store: () => {
        asked++;
        return new MemoryIdempotencyStore();
      },
      creates: true,
    });
    apps.push(app);
    expect(asked).toBe(0);
    const key = { 'idempotency-key': randomUUID() };
    await post(app, '/api/notes', { title: 'Once' }, key);
    const again = await post(app, '/api/notes', { title: 'Once' }, key);
    expect(again.headers['idempotency-replayed']).toBe('true');
    expect(created).toHaveLength(1);
    expect(asked).toBe(1);

    const inspected = createApp({ logger: false, inspect: true }).mount([notesApi().notes]);
    await inspected.register(idempotencyPlugin, {
      store: () => {
        throw new Error('asked while inspected');
      },
      creates: true,
    });
    apps.push(inspected);
    await inspected.ready();
  });

  it('replays the first answer, status, body and Location, without running the handler again', async () => {
    const { app, created } = await appWith(new MemoryIdempotencyStore());
    const key = { 'idempotency-key': randomUUID() };
    const first = await post(app, '/api/notes', { title: 'Once' }, key);
    expect(first.statusCode).toBe(201);
    expect(first.headers['idempotency-replayed']).toBeUndefined();
    const again = await post(app, '/api/notes', { title: 'Once' }, key);
    expect(again.statusCode).toBe(201);
    expect(again.body).toBe(first.body);
    expect(again.headers.location).toBe(first.headers.location);
    expect(again.headers['idempotency-replayed']).toBe('true');
    expect(created).toHaveLength(1);
    // A quoted key (the IETF draft's form) is the same key.
    const quoted = await post(
      app,
      '/api/notes',
      { title: 'Once' },
      { 'idempotency-key': `"${key['idempotency-key']}"` },
    );
    expect(quoted.headers['idempotency-replayed']).toBe('true');
  });

  it("asks the route's guards again before a replay: a caller who lost the right gets no stored answer", async () => {
    let open = true;
    const gated = procedures('gates', {
      createGate: procedure()
        .guard(guard({ name: 'gates open', check: () => open }))
        .input(z.object({ name: z.string() }))
        .mutation(({ input }) => ({ id: '1', name: input.name })),
    });
    const app = createApp({ logger: false }).mount([gated]);
    await app.register(idempotencyPlugin, { store: new MemoryIdempotencyStore(), creates: true });
    apps.push(app);
    const key = { 'idempotency-key': randomUUID() };
    expect((await post(app, '/api/gates', { name: 'north' }, key)).statusCode).toBe(201);
    expect((await post(app, '/api/gates', { name: 'north' }, key)).headers['idempotency-replayed']).toBe(
      'true',
    );
    open = false;
    const refused = await post(app, '/api/gates', { name: 'north' }, key);
    expect(refused.statusCode).toBe(401);
    expect(refused.headers['idempotency-replayed']).toBeUndefined();
    expect(refused.body).not.toContain('north');
  });

  it('answers 422 for the key with another body, 409 while the first request runs', async () => {
    const { app, created, hold } = await appWith(new MemoryIdempotencyStore());
    const key = { 'idempotency-key': randomUUID() };
    const holding = hold();
    const running = post(app, '/api/notes', { title: 'First' }, key);
    // The first request's handler is running when the second arrives with the same key.
    const release = await holding;
    const overlapping = await post(app, '/api/notes', { title: 'First' }, key);
    release();
    const first = await running;
    expect(first.statusCode).toBe(201);
    expect(overlapping.statusCode).toBe(409);
    expect(overlapping.headers['retry-after']).toBe('1');
    expect(overlapping.json()).toMatchObject({ code: 'CONFLICT' });
    const other = await post(app, '/api/notes', { title: 'Another' }, key);
    expect(other.statusCode).toBe(422);
    expect(other.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(other.json()).toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED', status: 422 });
    expect(created).toHaveLength(1);
  });

  it('refuses a body nested too deeply to fingerprint with 400, not 500, and keeps the key free', async () => {
    const { app, created } = await appWith(new MemoryIdempotencyStore());
    const key = { 'idempotency-key': randomUUID() };
    const depth = 20_000;
    const deep = await app.inject({
      method: 'POST',
      url: '/api/notes',
      headers: { ...key, 'content-type': 'application/json' },
      payload: `{"title":${'['.repeat(depth)}${']'.repeat(depth)}}`,
    });
    expect(deep.statusCode).toBe(400);
    expect(deep.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(deep.json()).toMatchObject({
      code: 'VALIDATION_FAILED',
      errors: [{ message: 'The body is nested too deeply' }],
    });
    expect((await post(app, '/api/notes', { title: 'Fine' }, key)).statusCode).toBe(201);
    expect(created).toHaveLength(1);
  });

  it('frees the key of a request that failed, so the corrected request may use it', async () => {
    const { app, created } = await appWith(new MemoryIdempotencyStore());
    const key = { 'idempotency-key': randomUUID() };
    expect((await post(app, '/api/notes', { title: '' }, key)).statusCode).toBe(400);
    expect((await post(app, '/api/notes', { title: 'Fixed' }, key)).statusCode).toBe(201);
    expect(created).toHaveLength(1);
  });

  it('keeps callers apart, and runs again once the key expired', async () => {
    // The store reads the clock: a fake one moves past the key's life without waiting for it.
    vi.useFakeTimers({ toFake: ['Date'] });
    onTestFinished(() => {
      vi.useRealTimers();
    });
    const { app, created } = await appWith(new MemoryIdempotencyStore(), { ttl: 50, lockTimeout: 10 });
    const key = randomUUID();
    await post(app, '/api/notes', { title: 'A' }, { 'idempotency-key': key });
    const otherIp = await app.inject({
      method: 'POST',
      url: '/api/notes',
      payload: { title: 'A' },
      headers: { 'idempotency-key': key },
      remoteAddress: '10.0.0.9',
    });
    expect(otherIp.headers['idempotency-replayed']).toBeUndefined();
    expect(created).toHaveLength(2);
    vi.setSystemTime(Date.now() + 49);
    const stillKept = await post(app, '/api/notes', { title: 'A' }, { 'idempotency-key': key });
    expect(stillKept.headers['idempotency-replayed']).toBe('true');
    vi.setSystemTime(Date.now() + 2);
    const later = await post(app, '/api/notes', { title: 'A' }, { 'idempotency-key': key });
    expect(later.headers['idempotency-replayed']).toBeUndefined();
    expect(created).toHaveLength(3);
  });

  it('refuses a malformed key, and a key on a POST that does not replay, with 400', async () => {
    const { app } = await appWith(new MemoryIdempotencyStore(), { creates: false });
    for (const [url, key] of [
      ['/api/notes/1/pin', ''],
      ['/api/notes/1/pin', 'x'.repeat(256)],
      ['/api/notes/1/pin', 'two words'],
      ['/api/notes/1/archive', randomUUID()],
      ['/api/notes', randomUUID()],
    ] as const) {
      const refused = await post(app, url, { title: 't' }, { 'idempotency-key': key });
      expect(refused.statusCode, `${url} ${key}`).toBe(400);
      expect(refused.json()).toMatchObject({
        code: 'VALIDATION_FAILED',
        errors: [{ path: 'Idempotency-Key' }],
      });
    }
    // `.idempotent()` replays without `creates`.
    const key = { 'idempotency-key': randomUUID() };
    await post(app, '/api/notes/1/pin', {}, key);
    expect((await post(app, '/api/notes/1/pin', {}, key)).headers['idempotency-replayed']).toBe('true');
  });

  it('keeps the key of a request that failed unexpectedly (it may have written): a retry gets 409', async () => {
    let runs = 0;
    const flaky = procedures('jobs', {
      createJob: procedure().mutation(() => {
        runs++;
        throw new Error('connection lost after the insert');
      }),
    });
    const app = createApp({ logger: false }).mount([flaky]);
    await app.register(idempotencyPlugin, { store: new MemoryIdempotencyStore(), creates: true });
    apps.push(app);
    const key = { 'idempotency-key': randomUUID() };
    expect((await post(app, '/api/jobs', {}, key)).statusCode).toBe(500);
    const retry = await post(app, '/api/jobs', {}, key);
    expect(retry.statusCode).toBe(409);
    expect(runs).toBe(1);
  });

  it('leaves the header alone on an app without a key store', async () => {
    const { notes } = notesApi();
    const plain = procedures('memos', { createMemo: procedure().mutation(() => ({ id: '1' })) });
    const app = createApp({ logger: false }).mount([plain]);
    apps.push(app);
    expect(notes).toBeDefined();
    const answer = await post(app, '/api/memos', {}, { 'idempotency-key': randomUUID() });
    expect(answer.statusCode).toBe(201);
  });

  it('refuses a ttl no longer than the lock timeout', async () => {
    const app = createApp({ logger: false });
    await expect(
      app.register(idempotencyPlugin, { store: new MemoryIdempotencyStore(), ttl: 1000, lockTimeout: 1000 }),
    ).rejects.toThrow(/ttl \(1000 ms\) must be longer than lockTimeout/);
  });

  it('refuses at start-up an .idempotent() procedure without a store, and one that is not a POST', async () => {
    const { notes } = notesApi();
    const bare = createApp({ logger: false }).mount([notes]);
    await expect(bare.ready()).rejects.toThrow(
      /notes\.pinNote is \.idempotent\(\), but the app has no idempotency store: register idempotencyPlugin/,
    );
    expect(() =>
      createApp({ logger: false }).mount([
        procedures('tags', {
          updateTag: procedure()
            .idempotent()
            .mutation(() => ({})),
        }),
      ]),
    ).toThrow(/tags\.updateTag is \.idempotent\(\) but answers PUT/);
  });

  it('documents the header, the replay header, 409 and 422 on the routes that replay', async () => {
    const { generateOpenApi } = await import('../openapi/generate.js');
    const { app } = await appWith(new MemoryIdempotencyStore(), { creates: true });
    const document = generateOpenApi({ app, info: { title: 'Notes', version: '1' } });
    const create = document.paths['/api/notes']?.post;
    expect(create?.parameters?.map((parameter) => parameter.name)).toContain('Idempotency-Key');
    expect(Object.keys(create?.responses ?? {})).toEqual(expect.arrayContaining(['409', '422']));
    expect(create?.responses['201']).toMatchObject({ headers: { 'Idempotency-Replayed': {} } });
    const archive = document.paths['/api/notes/{id}/archive']?.post;
    expect(archive?.parameters?.map((parameter) => parameter.name)).not.toContain('Idempotency-Key');
    expect(Object.keys(archive?.responses ?? {})).not.toContain('422');
    const keyOf = (operation: OpenApiOperation | undefined) =>
      operation?.parameters?.find((parameter) => parameter.name === 'Idempotency-Key')?.description;
    expect(keyOf(create)).toMatch(/with the same body within 24 hours, it replays/);
  });

  it('documents how long the app keeps a key, on .idempotent() routes and creates alike', async () => {
    const { generateOpenApi } = await import('../openapi/generate.js');
    const { app } = await appWith(new MemoryIdempotencyStore(), { creates: true, ttl: 6 * 3_600_000 });
    const document = generateOpenApi({ app, info: { title: 'Notes', version: '1' } });
    const keyOf = (operation: OpenApiOperation | undefined) =>
      operation?.parameters?.find((parameter) => parameter.name === 'Idempotency-Key')?.description;
    expect(keyOf(document.paths['/api/notes']?.post)).toMatch(/within 6 hours/);
    expect(keyOf(document.paths['/api/notes/{id}/pin']?.post)).toMatch(/within 6 hours/);
  });
});

describe.skipIf(postgresUrl === null)('two instances sharing a PostgreSQL key store', () => {
  it('create exactly one note from twenty simultaneous POSTs with one key, spread over both', async () => {
    const { pool, table, close } = await postgresSchema();
    try {
      const [one, two] = [
        await appWith(new PostgresIdempotencyStore(pool, { table })),
        await appWith(new PostgresIdempotencyStore(pool, { table })),
      ];
      const key = { 'idempotency-key': randomUUID() };
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, index) =>
          post(index % 2 === 0 ? one.app : two.app, '/api/notes', { title: 'Shared' }, key),
        ),
      );
      expect(one.created.length + two.created.length).toBe(1);
      // One ran; the rest came while it ran (409) or, on a busy machine, after it answered (replays).
      const ran = answers.filter(
        (answer) => answer.statusCode === 201 && answer.headers['idempotency-replayed'] === undefined,
      );
      expect(ran).toHaveLength(1);
      expect(answers.every((answer) => answer.statusCode === 201 || answer.statusCode === 409)).toBe(true);
      const replay = await post(two.app, '/api/notes', { title: 'Shared' }, key);
      expect(replay.statusCode).toBe(201);
      expect(replay.headers['idempotency-replayed']).toBe('true');
    } finally {
      for (const app of apps.splice(0)) await app.close();
      await close();
    }
  });
});
