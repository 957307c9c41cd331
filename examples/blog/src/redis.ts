/**
 * The blog's Redis client for shared rate limits (docs/deployment.md, "Shared rate limits").
 * Made to fail fast: while Redis is down a command fails at once (no offline queue, one retry,
 * 1 s timeouts), so the rate limiter can let requests through instead of holding them.
 */
import { Redis } from 'ioredis';

/** The client, and whether it was connected within 2 s (it keeps trying either way). */
export async function connectRedis(
  url: string,
): Promise<{ redis: Redis; reachable: boolean; where: string }> {
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 1000,
    commandTimeout: 1000,
    // Keep trying, at most every 2 s, for as long as the app runs.
    retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
  });
  // Reported once per outage by the rate limiter; without a listener ioredis prints each attempt.
  redis.on('error', () => undefined);
  // Not events.once: it rejects on the first 'error', and a refused connection is not fatal here.
  const ready = new Promise<true>((resolve) => redis.once('ready', () => resolve(true)));
  const timeout = new Promise<false>((resolve) => setTimeout(() => resolve(false), 2000).unref());
  return { redis, reachable: await Promise.race([ready, timeout]), where: where(url) };
}

/** host:port, without credentials. */
function where(url: string): string {
  const parsed = new URL(url);
  return `${parsed.hostname}:${parsed.port || 6379}`;
}
