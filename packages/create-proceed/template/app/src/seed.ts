/**
 * `npm run seed`: an admin, a user and a few notes, to try the API with. Run it once, with the
 * server stopped when the database is PGlite (one process at a time); running it again changes
 * nothing. SEED_PASSWORD sets both accounts' password (default: printed once, random).
 */
import { randomBytes } from 'node:crypto';
import { hashPassword, uuidv7 } from 'proceedjs/auth';
import { openDatabase } from './db.js';
import { notes, users } from './schema.js';

const password = process.env.SEED_PASSWORD || randomBytes(9).toString('base64url');
const { db, close } = await openDatabase().catch((error: Error) => {
  console.error(`seed: ${error.message}`);
  process.exit(1);
});
try {
  const passwordHash = await hashPassword(password);
  const accounts = await db
    .insert(users)
    .values([
      { id: uuidv7(), email: 'admin@example.com', name: 'Admin', role: 'admin' as const, passwordHash },
      { id: uuidv7(), email: 'ada@example.com', name: 'Ada', passwordHash },
    ])
    .onConflictDoNothing()
    .returning();
  const ada = accounts.find((account) => account.email === 'ada@example.com');
  if (ada !== undefined)
    await db.insert(notes).values([
      { id: uuidv7(), ownerId: ada.id, title: 'Welcome', body: 'A public note: anyone can read it.' },
      {
        id: uuidv7(),
        ownerId: ada.id,
        title: 'Diary',
        body: 'Only Ada and admins see this.',
        isPrivate: true,
      },
    ]);
  // An account that was there already keeps its password and notes.
  console.log(
    accounts.length === 0
      ? 'The database is seeded already: nothing changed.'
      : `Seeded. Sign in as ${accounts.map((account) => account.email).join(' or ')} with the password ${password}`,
  );
} finally {
  await close();
}
