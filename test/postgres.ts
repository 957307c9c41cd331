/**
 * Scratch PostgreSQL databases for tests: each run creates its own, with a random name, and
 * drops it at the end, so runs never see each other's rows.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

const inUse = '55006';

async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/**
 * Creates `<prefix>_<random>` through an admin connection. `drop()` waits for the test's own
 * connections to finish closing (a pool's `end()` resolves before the server has seen every
 * goodbye) and only then forces the matter: terminating a connection that is still closing makes
 * its client emit an error nobody listens to any more.
 */
export async function createScratchDatabase(
  adminUrl: string,
  prefix: string,
): Promise<{ name: string; url: string; drop(): Promise<void> }> {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  await withClient(adminUrl, (client) => client.query(`CREATE DATABASE ${name}`));
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    drop: () =>
      withClient(adminUrl, async (client) => {
        for (let attempt = 0; attempt < 100; attempt++) {
          try {
            await client.query(`DROP DATABASE IF EXISTS ${name}`);
            return;
          } catch (error) {
            if ((error as { code?: string }).code !== inUse) throw error;
            await new Promise((resolve) => setTimeout(resolve, 50));
          }
        }
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      }),
  };
}
