import { connect } from 'node:net';
import type {} from 'vitest';
import type { TestProject } from 'vitest/node';
import { inCi } from './ci.js';

/**
 * Probes the services some suites need: PostgreSQL at TEST_DATABASE_URL and Redis at
 * TEST_REDIS_URL (local defaults). On a developer machine a missing service skips those suites
 * and says so; under CI=true it fails the run, because a silently skipped database suite is a
 * suite that cannot fail. Inside Proceed's repository its own global set-up does the same.
 */
export default async function setup(project: TestProject): Promise<() => void> {
  const postgresUrl = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const redisUrl = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
  const [postgres, redis] = await Promise.all([reachable(postgresUrl, 5432), reachable(redisUrl, 6379)]);
  const missing = [!postgres && `PostgreSQL (${postgresUrl})`, !redis && `Redis (${redisUrl})`].filter(
    Boolean,
  );
  if (missing.length > 0) {
    const message = `unreachable: ${missing.join(', ')}`;
    if (inCi()) throw new Error(`${message}; CI requires every service`);
    console.warn(`\n[services] ${message}; the suites that need them are skipped\n`);
  }
  project.provide('postgresUrl', postgres ? postgresUrl : null);
  project.provide('redisUrl', redis ? redisUrl : null);
  return () => {
    if (missing.length > 0) console.warn(`\n[services] skipped suites needing: ${missing.join(', ')}\n`);
  };
}

function reachable(url: string, defaultPort: number): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname || '127.0.0.1', port: Number(port || defaultPort) });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

declare module 'vitest' {
  export interface ProvidedContext {
    postgresUrl: string | null;
    redisUrl: string | null;
  }
}
