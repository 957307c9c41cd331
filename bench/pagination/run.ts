/**
 * Offset versus cursor pagination on 100,000 posts (docs/pagination.md).
 *
 * For each engine (PGlite in memory; PostgreSQL when reachable), loads 100,000 published posts,
 * then reads a 20-item page of the public feed at depths 1, 100 and 5,000 (the last page) with
 * OFFSET and with the blog's cursor listing. Each round runs every case in a new (seeded) order;
 * a sample is the mean of 10 consecutive reads of one case; the median sample of each case is
 * reported, and its ratio to the first page of the same pattern.
 *
 *   npm run bench:pagination [-- --rounds 31 --reads 10 --posts 100000 --engines pglite,postgres]
 *
 * PostgreSQL: BENCH_DATABASE_URL or TEST_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres)
 * is an admin connection; a scratch database is created and dropped.
 */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { desc, eq } from 'drizzle-orm';
import { type Database, openDatabase } from '../../examples/blog/src/db/connect.js';
import { newId } from '../../examples/blog/src/db/ids.js';
import { postsRepository } from '../../examples/blog/src/db/posts.js';
import { posts } from '../../examples/blog/src/db/schema.js';
import { usersRepository } from '../../examples/blog/src/db/users.js';
import { createPostgresDatabase } from '../../examples/blog/test/databases.js';

const { values: args } = parseArgs({
  options: {
    rounds: { type: 'string', default: '31' },
    posts: { type: 'string', default: '100000' },
    engines: { type: 'string', default: 'pglite,postgres' },
    reads: { type: 'string', default: '10' },
  },
});
const rounds = Number(args.rounds);
const total = Number(args.posts);
const readsPerSample = Number(args.reads);
const limit = 20;
const depths = [1, 100, Math.floor(total / limit)];
const adminUrl =
  process.env.BENCH_DATABASE_URL ??
  process.env.TEST_DATABASE_URL ??
  'postgres://postgres@127.0.0.1:5432/postgres';

type Pattern = 'offset' | 'cursor';
interface Case {
  pattern: Pattern;
  depth: number;
  run: () => Promise<number>;
}

async function load(database: Database): Promise<string[]> {
  const author = await usersRepository(database.db).create({
    email: 'bench@example.com',
    name: 'Bench',
    passwordHash: 'x',
  });
  // Bulk insert with the repositories' own ids (UUIDv7, increasing): creating 100,000 posts one
  // by one would only make the set-up slower.
  const batch = 1000;
  for (let start = 0; start < total; start += batch) {
    const rows = Array.from({ length: Math.min(batch, total - start) }, (_, index) => ({
      id: newId(),
      authorId: author.id,
      title: `Post ${start + index}`,
      content: `Content of post ${start + index}. ${'Lorem ipsum dolor sit amet. '.repeat(4)}`,
      excerpt: `Content of post ${start + index}.`,
      status: 'published' as const,
    }));
    await database.db.insert(posts).values(rows);
  }
  await database.query('ANALYZE posts');
  const { rows } = await database.query<{ id: string }>(
    "SELECT id FROM posts WHERE status = 'published' ORDER BY id DESC",
  );
  return rows.map((row) => row.id);
}

function casesFor(database: Database, newestFirst: string[]): Case[] {
  const repository = postsRepository(database);
  const cases: Case[] = [];
  for (const depth of depths) {
    const offset = (depth - 1) * limit;
    cases.push({
      pattern: 'offset',
      depth,
      run: async () =>
        (
          await database.db
            .select()
            .from(posts)
            .where(eq(posts.status, 'published'))
            .orderBy(desc(posts.id))
            .limit(limit)
            .offset(offset)
        ).length,
    });
    // The cursor a client holds after walking depth - 1 pages: the last id of the page before.
    const cursor = depth === 1 ? undefined : newestFirst[offset - 1];
    cases.push({
      pattern: 'cursor',
      depth,
      run: async () =>
        (await repository.listCursor({ cursor, limit, direction: 'forward' }, { kind: 'anonymous' })).data
          .length,
    });
  }
  return cases;
}

/** A seeded Fisher–Yates shuffle (mulberry32), so two runs use the same orders. */
function shuffler(seed: number): <T>(items: readonly T[]) => T[] {
  let state = seed;
  const random = () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return (items) => {
    const copy = [...items];
    for (let index = copy.length - 1; index > 0; index--) {
      const other = Math.floor(random() * (index + 1));
      [copy[index], copy[other]] = [
        copy[other] as (typeof copy)[number],
        copy[index] as (typeof copy)[number],
      ];
    }
    return copy;
  };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
};

async function measure(name: string, database: Database): Promise<string[]> {
  const started = performance.now();
  const newestFirst = await load(database);
  console.error(
    `${name}: loaded ${newestFirst.length} posts in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
  const cases = casesFor(database, newestFirst);
  for (const item of cases) {
    if ((await item.run()) !== limit)
      throw new Error(`${item.pattern} at depth ${item.depth} did not return a full page`);
  }
  const samples = new Map<Case, number[]>(cases.map((item) => [item, []]));
  const shuffle = shuffler(7);
  for (let round = 0; round < rounds; round++) {
    // A new order every round: no case always follows the slow deep offset read, and neither
    // pattern always runs on a warmer cache.
    for (const item of shuffle(cases)) {
      const start = performance.now();
      for (let read = 0; read < readsPerSample; read++) await item.run();
      samples.get(item)?.push((performance.now() - start) / readsPerSample);
    }
  }
  const lines: string[] = [];
  for (const pattern of ['offset', 'cursor'] as const) {
    const mine = cases.filter((item) => item.pattern === pattern);
    const first = median(samples.get(mine[0] as Case) ?? []);
    const cells = mine.map((item) => {
      const value = median(samples.get(item) ?? []);
      return `${value.toFixed(2)} ms (${(value / first).toFixed(2)}×)`;
    });
    lines.push(`| ${name} | ${pattern} | ${cells.join(' | ')} |`);
  }
  return lines;
}

async function main(): Promise<void> {
  const engines = args.engines.split(',');
  const lines: string[] = [];
  if (engines.includes('pglite')) {
    const database = await openDatabase('memory://');
    try {
      lines.push(...(await measure('PGlite', database)));
    } finally {
      await database.close();
    }
  }
  if (engines.includes('postgres')) {
    let created: Awaited<ReturnType<typeof createPostgresDatabase>> | undefined;
    try {
      created = await createPostgresDatabase(adminUrl);
    } catch (error) {
      console.error(`PostgreSQL unreachable at ${adminUrl} (${(error as Error).message}): skipped`);
    }
    if (created !== undefined) {
      const database = await openDatabase(created.url);
      try {
        lines.push(...(await measure('PostgreSQL', database)));
      } finally {
        await database.close();
        await created.drop();
      }
    }
  }
  console.log(
    `\n${total.toLocaleString('en')} posts, ${limit} per page, median of ${rounds} shuffled rounds of ${readsPerSample} reads; ratio to the first page of the same pattern.\n`,
  );
  console.log(
    `| Engine | Pattern | ${depths.map((depth) => `page ${depth.toLocaleString('en')}`).join(' | ')} |`,
  );
  console.log(`|---|---|${depths.map(() => '---').join('|')}|`);
  for (const line of lines) console.log(line);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
