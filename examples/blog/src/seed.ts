/**
 * Fills the blog's database with demo data: an admin, 30 users and 300 posts in every status,
 * spread over the last 90 days. `npm run seed` (root or blog workspace) runs the compiled copy.
 *
 * Idempotent: a database that already holds the demo users is left as it is (the admin's
 * password is still ensured). `npm run seed -- --reset` empties every table first.
 *
 * Environment: DATABASE_URL (default ./.data/db, as `npm start`), ADMIN_EMAIL and ADMIN_PASSWORD
 * (default admin@example.com / admin-password, printed at the end), PASSWORD_HASH_COST. Refused
 * with NODE_ENV=production: its users' passwords are known.
 */
import { ProceedConfigError } from 'proceedjs';
import { hashPassword, type ScryptCost } from 'proceedjs/auth';
import { openDatabase } from './db/connect.js';
import { newId } from './db/ids.js';
import { deriveExcerpt } from './db/posts.js';
import { type PostStatus, posts, type Role, users } from './db/schema.js';
import { usersRepository } from './db/users.js';
import { readSettings } from './settings.js';

const userCount = 30;
const postCount = 300;
const demoPassword = 'password123';
const firstNames = [
  'Ada',
  'Alan',
  'Barbara',
  'Claude',
  'Dennis',
  'Edsger',
  'Frances',
  'Grace',
  'Hedy',
  'Ivan',
];
const lastNames = [
  'Lovelace',
  'Turing',
  'Liskov',
  'Shannon',
  'Ritchie',
  'Dijkstra',
  'Allen',
  'Hopper',
  'Lamarr',
  'Sutherland',
];
const words =
  'api cursor page index query schema token route guard view field record stream cache request response server client version release test deploy build merge review'.split(
    ' ',
  );

/** A small deterministic generator (mulberry32): the same seed data on every machine. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const next = random(20_241_122);
const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;
const sentence = (length: number) => {
  const text = Array.from({ length }, () => pick(words)).join(' ');
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}.`;
};

async function main(): Promise<void> {
  if (process.env.NODE_ENV === 'production')
    throw new ProceedConfigError(
      'demo users with a known password have no place in production (NODE_ENV=production); ' +
        'the blog makes its admin at start-up from ADMIN_EMAIL and ADMIN_PASSWORD',
    );
  // The blog's own check of PASSWORD_HASH_COST: a development database seeds as fast as it logs in.
  const { passwordCost } = readSettings({ inspect: true });
  const reset = process.argv.includes('--reset');
  const database = await openDatabase();
  try {
    const repository = usersRepository(database.db);
    if (reset) await database.query('TRUNCATE users, posts, password_resets CASCADE');

    const adminEmail = process.env.ADMIN_EMAIL ?? 'admin@example.com';
    const adminPassword = process.env.ADMIN_PASSWORD ?? 'admin-password';
    const admin = await repository.ensureAdmin({
      email: adminEmail,
      name: 'Admin',
      passwordHash: await hashPassword(adminPassword, passwordCost),
    });

    const marker = 'ada.lovelace@example.com';
    if ((await repository.findByEmail(marker)) !== undefined) {
      console.log(`Already seeded (${marker} exists); run with --reset to start again.`);
    } else {
      await seedDemo(database.db, admin.id, passwordCost ?? {});
    }

    const counts = await database.query<{ users: number; posts: number }>(
      'SELECT (SELECT count(*)::int FROM users) AS users, (SELECT count(*)::int FROM posts) AS posts',
    );
    console.log(
      `Database (${database.kind}): ${counts.rows[0]?.users} users, ${counts.rows[0]?.posts} posts.`,
    );
    console.log(`Admin:      ${adminEmail} / ${adminPassword}`);
    console.log(`Demo users: ${marker} … / ${demoPassword}`);
  } finally {
    await database.close();
  }
}

async function seedDemo(
  db: Awaited<ReturnType<typeof openDatabase>>['db'],
  adminId: string,
  passwordCost: ScryptCost,
): Promise<void> {
  const now = Date.now();
  const day = 86_400_000;
  const start = now - 90 * day;
  const passwordHash = await Promise.all(
    Array.from({ length: userCount }, () => hashPassword(demoPassword, passwordCost)),
  );

  // Ids are UUIDv7 stamped with each row's creation time, so id order stays creation order.
  const people = Array.from({ length: userCount }, (_, index) => {
    const first = firstNames[index % firstNames.length] as string;
    const last = lastNames[(index + Math.floor(index / firstNames.length)) % lastNames.length] as string;
    const createdAt = new Date(start + index * 3600_000);
    const role: Role = index % 10 === 9 ? 'guest' : 'user';
    return {
      id: newId(createdAt),
      email: `${first}.${last}${index < firstNames.length ? '' : index}@example.com`.toLowerCase(),
      name: `${first} ${last}`,
      passwordHash: passwordHash[index] as string,
      role,
      isActive: index % 15 !== 14,
      createdAt,
      updatedAt: createdAt,
    };
  });
  await db.insert(users).values(people);

  const authors = [...people.map((person) => person.id), adminId];
  const statuses: PostStatus[] = [
    'published',
    'published',
    'published',
    'published',
    'draft',
    'draft',
    'archived',
  ];
  const rows = Array.from({ length: postCount }, (_, index) => {
    const createdAt = new Date(start + day + Math.floor((index / postCount) * 88 * day) + index);
    const content = Array.from({ length: 3 + Math.floor(next() * 6) }, () =>
      sentence(8 + Math.floor(next() * 12)),
    ).join(' ');
    return {
      id: newId(createdAt),
      authorId: pick(authors),
      title: sentence(3 + Math.floor(next() * 5)).slice(0, -1),
      content,
      excerpt: deriveExcerpt(content),
      status: pick(statuses),
      createdAt,
      updatedAt: createdAt,
    };
  });
  for (let offset = 0; offset < rows.length; offset += 100)
    await db.insert(posts).values(rows.slice(offset, offset + 100));
}

main().catch((error: unknown) => {
  // A refusal (the database is in use, a bad DATABASE_URL) explains itself; a stack would bury it.
  console.error(error instanceof ProceedConfigError ? `seed: ${error.message}` : error);
  process.exitCode = 1;
});
