/** METRICS_PORT: the blog's Prometheus metrics on a port of their own (docs/blog.md). */
import { describe, expect, inject, it } from 'vitest';
import WebSocket from 'ws';
import { engines, useBlog } from './harness.js';
import { freePort } from './ports.js';

const postgres = engines().find((engine) => engine.name === 'PostgreSQL');
const metricsPort = await freePort();

describe.skipIf(postgres === undefined || inject('postgresUrl') === null)('the blog’s metrics', () => {
  const blog = useBlog(postgres as NonNullable<typeof postgres>, { metricsPort });

  it('counts its procedures and reports its PostgreSQL pool, on METRICS_PORT only', async () => {
    const session = await blog.register();
    await blog.get('/api/posts');
    await blog.get('/api/auth/me', session.accessToken);
    await blog.get('/api/posts/not-a-uuid');
    const scrape = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    expect(scrape.status).toBe(200);
    const text = await scrape.text();
    expect(text).toContain(
      'proceed_http_requests_total{procedure="posts.listPosts",method="GET",status_class="2xx"} 1',
    );
    expect(text).toContain(
      'proceed_http_requests_total{procedure="auth.register",method="POST",status_class="2xx"} 1',
    );
    expect(text).toContain('proceed_problems_total{code="VALIDATION_FAILED",status="400"} 1');
    expect(text).toMatch(/^proceed_db_pool_connections\{state="total"\} [1-9]\d*$/m);
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds /m);
    expect((await blog.get('/metrics')).status).toBe(404);
  });

  it('counts a WebSocket handshake as the 101 it was answered with, on every runtime', async () => {
    const ws = new WebSocket(`${blog.origin.replace(/^http/, 'ws')}/api/posts/live`);
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    const counted = () =>
      fetch(`http://127.0.0.1:${metricsPort}/metrics`)
        .then((scrape) => scrape.text())
        .then((text) =>
          text.includes(
            'proceed_http_requests_total{procedure="posts.livePosts",method="GET",status_class="1xx"} 1',
          ),
        );
    // Counted once the handshake's answer is done with: asked until it is.
    for (let tries = 0; !(await counted()) && tries < 50; tries++)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await counted()).toBe(true);
    ws.close();
  });

  it('counts a request in flight on every runtime: an open event stream, until its client leaves', async () => {
    const inFlight = async () =>
      Number(
        /^proceed_http_requests_in_flight (\d+)$/m.exec(
          await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text(),
        )?.[1],
      );
    const leave = new AbortController();
    const stream = await fetch(`${blog.origin}/api/posts/events`, { signal: leave.signal });
    expect(stream.status).toBe(200);
    expect(await inFlight()).toBe(1);
    leave.abort();
    await stream.body?.cancel().catch(() => undefined);
    // The server notices the closed connection on its own time: asked until it has.
    let now = await inFlight();
    while (now !== 0) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      now = await inFlight();
    }
    expect(now).toBe(0);
  });
});
