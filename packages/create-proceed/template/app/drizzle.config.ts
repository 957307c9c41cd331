// `npm run db:generate`: drizzle-kit compares src/schema.ts with the migrations in drizzle/ and
// writes the SQL of what changed as the next one. The app applies them when it starts (src/db.ts).
import { defineConfig } from 'drizzle-kit';

export default defineConfig({
  dialect: 'postgresql',
  schema: './src/schema.ts',
  out: './drizzle',
});
