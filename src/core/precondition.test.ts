/** `.versioned()` and If-Match in the core: parsing, the handler's check, refusals. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Call } from './call.js';
import { ProceedError } from './errors.js';
import { compileRoute } from './execute.js';
import { requestInfo } from './fixtures/request.js';
import { admits, listedTags, parseIfMatch, versionedTag, versionOf } from './precondition.js';
import { type Procedure, procedure, procedures } from './procedure.js';
import { planRoutes } from './routes.js';

type Row = { id: string; title: string; version: number };

function compile(name: string, built: Procedure) {
  const [route] = planRoutes([procedures('posts', { [name]: built })]);
  if (route === undefined) throw new Error('not planned');
  const invoke = compileRoute(route);
  // A call that needs no promise answers synchronously; the tests await either.
  return (call: Call) => Promise.resolve(invoke(call));
}

const request = requestInfo({ method: 'PUT' });

/** A one-row store whose update applies only to the version it is given. */
function store() {
  const row: Row = { id: 'a', title: 'first', version: 3 };
  let writes = 0;
  return {
    row,
    get writes() {
      return writes;
    },
    updateIfVersion(version: number, title: string): Row | undefined {
      if (row.version !== version) return undefined;
      writes++;
      row.title = title;
      row.version++;
      return { ...row };
    },
  };
}

function updateRoute(db: ReturnType<typeof store>) {
  return compile(
    'updatePost',
    procedure()
      .input(z.object({ id: z.string(), data: z.object({ title: z.string() }) }))
      .output(z.object({ id: z.string(), title: z.string() }))
      .versioned((post: Row) => post.version)
      .mutation(({ input, ctx }) => {
        const current = { ...db.row };
        ctx.precondition.check(current.version);
        const updated = db.updateIfVersion(current.version, input.data.title);
        if (updated === undefined) throw new ProceedError('PRECONDITION_FAILED', 'changed meanwhile');
        return updated;
      }),
  );
}

const put = (ifMatch?: string) => ({
  ctx: { request },
  params: { id: 'a' },
  query: undefined,
  body: { title: 'second' },
  ifMatch,
});

describe('listedTags', () => {
  it('reads * or the quoted tags of a header, weak ones marked, anything else dropped', () => {
    expect(listedTags(' * ')).toBe('*');
    expect(listedTags('W/"a", "3.b-gzip" ,junk, "", "c')).toEqual([
      { text: 'W/"a"', weak: true, opaque: '"a"' },
      { text: '"3.b-gzip"', weak: false, opaque: '"3.b-gzip"' },
      { text: '""', weak: false, opaque: '""' },
    ]);
  });

  it('keeps a comma inside a tag (RFC 9110, 8.8.3): a split on every comma cut "v1,2" in two', () => {
    expect(listedTags('"v1,2", W/"a,b,c" , "d"')).toEqual([
      { text: '"v1,2"', weak: false, opaque: '"v1,2"' },
      { text: 'W/"a,b,c"', weak: true, opaque: '"a,b,c"' },
      { text: '"d"', weak: false, opaque: '"d"' },
    ]);
    const long = `${'"x", '.repeat(20_000)}junk, "y"`;
    const commas = `${','.repeat(1_000_000)}"a"`;
    const started = performance.now();
    expect((listedTags(long) as unknown[]).length).toBe(20_001);
    // Quadratic before: 256 K commas took 300 ms, these million about 4.5 s; linear, a few ms
    // (the bound leaves room for a busy machine).
    expect(listedTags(commas)).toEqual([{ text: '"a"', weak: false, opaque: '"a"' }]);
    expect(performance.now() - started).toBeLessThan(1_000);
  });
});

describe('parseIfMatch', () => {
  it('reads the versions of strong versioned tags, ignoring weak and unversioned ones and codings', () => {
    expect(parseIfMatch('*')).toBe('*');
    expect(parseIfMatch(' "3.abc" , "4.def-gzip", W/"5.x", "hash-only", junk, ""')).toEqual(['3', '4']);
  });

  it('writes a versioned tag as version, dot, body hash', () => {
    expect(versionedTag('7', 'h')).toBe('"7.h"');
    expect(versionedTag(undefined, 'h')).toBe('"h"');
  });

  it('accepts counters and short tokens as versions, and names the procedure for anything else', () => {
    expect(versionOf(0, 'p')).toBe('0');
    expect(versionOf('rev_2-b', 'p')).toBe('rev_2-b');
    for (const bad of [-1, 1.5, 'a.b', '', 'x'.repeat(65), undefined, null, {}])
      expect(() => versionOf(bad, 'posts.updatePost')).toThrow(/posts\.updatePost: its version must be/);
  });
});

describe('If-Match against multi-digit versions (properties)', () => {
  const version = fc.nat({ max: 1_000_000 }).map(String);
  // Half the pairs equal: independent draws from a million would seldom meet.
  const versions = fc.oneof(
    fc.tuple(version, version),
    version.map((same): [string, string] => [same, same]),
  );
  const hash = fc.stringMatching(/^[0-9a-f]{16}$/);

  it('admits a version only when a tag names exactly it: never a prefix, an extension or a neighbour', () => {
    fc.assert(
      fc.property(versions, hash, fc.constantFrom('', '-gzip', '-br'), ([sent, current], h, coding) => {
        const ifMatch = parseIfMatch(`"${sent}.${h}${coding}"`);
        expect(ifMatch).toEqual([sent]);
        expect(admits(ifMatch, current)).toBe(sent === current);
      }),
    );
  });

  it('refuses "1.x" against version 12 and "12.x" against version 1, whatever else the header lists', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 99_999 }),
        fc.integer({ min: 0, max: 9 }),
        hash,
        (short, digit, h) => {
          const long = `${short}${digit}`;
          expect(admits(parseIfMatch(`"${short}.${h}"`), long)).toBe(false);
          expect(admits(parseIfMatch(`"${long}.${h}"`), String(short))).toBe(false);
          expect(admits(parseIfMatch(`W/"${long}.${h}", "${short}.${h}"`), long)).toBe(false);
        },
      ),
    );
  });
});

describe('a versioned write', () => {
  it('answers with the new version, for the ETag, when If-Match names the current one', async () => {
    const db = store();
    const reply = await updateRoute(db)(put('"3.whatever-hash"'));
    expect(reply).toMatchObject({ status: 200, version: '4', body: '{"id":"a","title":"second"}' });
    expect(db.writes).toBe(1);
  });

  it('refuses a stale version with 412 and writes nothing', async () => {
    const db = store();
    await expect(updateRoute(db)(put('"2.old"'))).rejects.toMatchObject({ code: 'PRECONDITION_FAILED' });
    await expect(updateRoute(db)(put('W/"3.weak"'))).rejects.toMatchObject({ code: 'PRECONDITION_FAILED' });
    expect(db.writes).toBe(0);
    expect(db.row.title).toBe('first');
  });

  it('writes without If-Match, and with If-Match: * or a list naming the current version', async () => {
    const db = store();
    const invoke = updateRoute(db);
    await invoke(put());
    await invoke(put('*'));
    await invoke(put('"1.a", "5.b"'));
    expect(db.writes).toBe(3);
  });

  it('lets exactly one of two writers with the same tag through', async () => {
    const db = store();
    const invoke = updateRoute(db);
    const results = await Promise.allSettled([invoke(put('"3.t"')), invoke(put('"3.t"'))]);
    expect(results.map((each) => each.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect(db.writes).toBe(1);
  });

  it('fails loudly when a handler that was sent If-Match never checks it', async () => {
    const careless = compile(
      'updatePost',
      procedure()
        .input(z.object({ id: z.string(), data: z.object({ title: z.string() }) }))
        .versioned()
        .mutation(() => ({ ok: true })),
    );
    await expect(careless(put('"3.x"'))).rejects.toThrow(
      /posts\.updatePost: a \.versioned\(\) write must call ctx\.precondition\.check/,
    );
    // Without If-Match there is nothing to check.
    await expect(careless(put())).resolves.toMatchObject({ status: 200, version: undefined });
  });
});

describe('a write that keeps no versions', () => {
  const invoke = () => {
    let ran = 0;
    const route = compile(
      'updatePost',
      procedure()
        .input(z.object({ id: z.string(), data: z.object({ title: z.string() }) }))
        .mutation(() => {
          ran++;
          return { ok: true };
        }),
    );
    return { route, ran: () => ran };
  };

  it('answers If-Match with a tag 412 without running the handler', async () => {
    const { route, ran } = invoke();
    await expect(route(put('"3.x"'))).rejects.toMatchObject({
      code: 'PRECONDITION_FAILED',
      message: expect.stringContaining('keeps no versions'),
    });
    expect(ran()).toBe(0);
  });

  it('runs with If-Match: * or none', async () => {
    const { route, ran } = invoke();
    await route(put('*'));
    await route(put());
    expect(ran()).toBe(2);
  });
});

describe('.versioned() on a query', () => {
  it('needs read, and hands the version to the adapter', async () => {
    expect(() =>
      procedure()
        .versioned()
        .query(() => 1),
    ).toThrow(/needs read/);
    const get = compile(
      'getPost',
      procedure()
        .input(z.object({ id: z.string() }))
        .versioned((row: Row) => row.version)
        .query(() => ({ id: 'a', title: 't', version: 9 })),
    );
    await expect(get({ ...put('"1.x"'), body: undefined })).resolves.toMatchObject({ version: '9' });
  });

  it('is declared once', () => {
    expect(() => procedure().versioned().versioned()).toThrow(/twice/);
  });
});
