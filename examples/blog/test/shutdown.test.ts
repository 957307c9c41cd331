/**
 * Graceful shutdown of the compiled blog as a process, on the runtime the suite runs on (Node,
 * or BLOG_RUNTIME=bun|deno): the drain, then a request whose body is still arriving when SIGTERM
 * comes finishes with its answer, and the process exits 0 (docs/deployment.md, "Shutdown").
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { blogDirectory, blogRuntime, proceedCommand } from './runtimes.js';
import { eventually, launch, requestInFlight } from './support.js';

const runtime = blogRuntime() ?? 'node';
/** High enough for the probes below: the auth routes' limit per minute. */
const authRateLimit = 1000;

/**
 * Resolves once the server has counted the request in flight on `POST /api/auth/register`: its
 * limiter counts a request before reading its body, so a probe on the same route sees one more
 * used than the probes sent. The app logs no line at a request's arrival on Bun and Deno.
 */
async function countedInFlight(origin: string): Promise<void> {
  for (let probes = 1; probes <= 100; probes++) {
    const probe = await fetch(`${origin}/api/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    await probe.arrayBuffer();
    if (Number(probe.headers.get('x-ratelimit-remaining')) === authRateLimit - probes - 1) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('The server never counted the request in flight');
}

/** Whether a new request is turned away: its connection refused, or a 503 while closing. */
async function refusesNewRequests(origin: string): Promise<boolean> {
  try {
    const response = await fetch(`${origin}/api/posts?limit=1`);
    await response.arrayBuffer();
    return response.status === 503;
  } catch {
    return true;
  }
}

/** The compiled blog started by `proceed start` on an embedded database; resolves once it listens. */
async function started(env: Record<string, string>) {
  const { command, args } = proceedCommand(runtime, ['start', 'dist/main.js', '--port', '0']);
  const server = launch(command, args, {
    cwd: blogDirectory,
    env: {
      DATABASE_URL: 'memory://',
      JWT_SECRET: randomBytes(32).toString('hex'),
      NODE_ENV: 'development',
      LOG_LEVEL: 'info',
      ...env,
    },
  });
  const listening = /Server listening at (http:\/\/127\.0\.0\.1:(\d+))/;
  await server.waitFor(listening, 90_000);
  const [, origin = '', port = ''] = listening.exec(server.output()) ?? [];
  return { server, origin, port };
}

describe(`SIGTERM to the blog on ${runtime}`, { timeout: 120_000 }, () => {
  it('lets a request whose body is still arriving finish with 201, then exits 0', async () => {
    // No drain: the server closes at once, while the body is still on its way.
    const { server, origin, port } = await started({
      SHUTDOWN_DRAIN_MS: '0',
      AUTH_RATE_LIMIT: String(authRateLimit),
    });

    const email = `in-flight-${randomBytes(4).toString('hex')}@example.com`;
    const inFlight = requestInFlight(Number(port), '/api/auth/register', {
      email,
      password: 'a good long password',
      name: 'In Flight',
    });
    await inFlight.sent;
    await countedInFlight(origin);

    process.kill(server.pid, 'SIGTERM');
    await server.waitFor('SIGTERM received: shutting down');
    // The server is closing: the rest of the body arrives after that.
    await eventually(() => refusesNewRequests(origin), 10_000, 'the server turns new requests away');
    inFlight.finish();
    const answer = await inFlight.answer;
    expect(answer, server.output()).toMatch(/^HTTP\/1\.1 201 Created/);
    expect(answer).toContain(email);

    expect(await server.exited, server.output()).toEqual({ code: 0, signal: null });
  });

  it('drains first: readiness 503 at once, requests still served with Connection: close, then exits 0', async () => {
    // Long enough that a busy machine sends both requests below within it.
    const { server, origin } = await started({ SHUTDOWN_DRAIN_MS: '3000' });
    const before = await fetch(`${origin}/api/posts?limit=1`);
    await before.arrayBuffer();
    expect(before.status).toBe(200);
    expect(before.headers.get('connection')).not.toBe('close');

    process.kill(server.pid, 'SIGTERM');
    await server.waitFor('SIGTERM received: shutting down');
    const readiness = await fetch(`${origin}/api/health`);
    expect(await readiness.json()).toMatchObject({ status: 503, code: 'UNAVAILABLE' });
    // Served while the load balancer notices, and told to go elsewhere for the next one.
    const during = await fetch(`${origin}/api/posts?limit=1`);
    await during.arrayBuffer();
    expect(during.status).toBe(200);
    expect(during.headers.get('connection')).toBe('close');

    expect(await server.exited, server.output()).toEqual({ code: 0, signal: null });
  });
});
