/**
 * The metrics plugin (docs/metrics.md): Prometheus text from prom-client on a port of its own,
 * never on the API's. Per procedure: requests by method and status class, latency, in flight,
 * problems by code; the process: event-loop lag, memory, CPU (prom-client's defaults); and, when
 * the app says how, its database pool.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { ProceedConfigError } from '../core/errors.js';
import type { App } from '../server/app.js';
import { problemCodeOf } from '../server/problems.js';
import { procedureOf } from '../server/procedure-route.js';

/** A connection pool's state, e.g. node-postgres' `{ total: pool.totalCount, … }`. */
export interface PoolStats {
  total: number;
  idle: number;
  /** Requests waiting for a connection. */
  waiting: number;
}

export interface MetricsPluginOptions {
  /** The port `GET /metrics` listens on, apart from the API (0: any free port). Required. */
  port: number;
  /** Default 127.0.0.1: reachable by a scraper on the same host or network namespace only. */
  host?: string;
  /** The database pool to report, read at each scrape. */
  pool?: () => PoolStats;
  /** Where the series live. Default: a registry of the plugin's own. */
  registry?: Registry;
  /** Called with the metrics address once it listens (`http://127.0.0.1:9464/metrics`). */
  onListening?: (url: string) => void;
}

/** Seconds; from a fast cached read to a slow write behind a lock. */
const latencyBuckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** What a request is counted under: its procedure, the health routes, or nothing matched. */
function routeLabel(request: FastifyRequest): string {
  const procedure = procedureOf(request);
  if (procedure !== undefined) return procedure;
  const url = request.routeOptions.url;
  return url === undefined ? 'unmatched' : url;
}

/**
 * Serves Prometheus metrics on their own port while the app listens.
 *
 * @example
 * await app.register(metricsPlugin, { port: 9464, pool: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }) });
 */
export async function metricsPlugin(app: App, options: MetricsPluginOptions): Promise<void> {
  if (typeof options?.port !== 'number' || !Number.isInteger(options.port) || options.port < 0)
    throw new ProceedConfigError('metricsPlugin needs a port of its own (an integer; 0 for any free port)');
  const registry = options.registry ?? new Registry();
  collectDefaultMetrics({ register: registry });

  const requests = new Counter({
    name: 'proceed_http_requests_total',
    help: 'Requests answered, by procedure (or route), method and status class',
    labelNames: ['procedure', 'method', 'status_class'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'proceed_http_request_duration_seconds',
    help: 'Time from the request to its answer, by procedure (or route) and method',
    labelNames: ['procedure', 'method'] as const,
    buckets: latencyBuckets,
    registers: [registry],
  });
  const inFlight = new Gauge({
    name: 'proceed_http_requests_in_flight',
    help: 'Requests received and not yet answered',
    registers: [registry],
  });
  const problems = new Counter({
    name: 'proceed_problems_total',
    help: 'Problem answers, by code (VALIDATION_FAILED, INTERNAL, …) and status',
    labelNames: ['code', 'status'] as const,
    registers: [registry],
  });
  const { pool } = options;
  if (pool !== undefined) {
    new Gauge({
      name: 'proceed_db_pool_connections',
      help: 'Database pool connections by state (total, idle, waiting requests)',
      labelNames: ['state'] as const,
      registers: [registry],
      collect() {
        const stats = pool();
        this.set({ state: 'total' }, stats.total);
        this.set({ state: 'idle' }, stats.idle);
        this.set({ state: 'waiting' }, stats.waiting);
      },
    });
  }

  const started = new WeakMap<FastifyRequest, bigint>();
  app.server.addHook('onRequest', async (request) => {
    inFlight.inc();
    started.set(request, process.hrtime.bigint());
  });
  app.server.addHook('onResponse', async (request, reply: FastifyReply) => {
    inFlight.dec();
    const procedure = routeLabel(request);
    const status = reply.statusCode;
    requests.inc({ procedure, method: request.method, status_class: `${Math.floor(status / 100)}xx` });
    const start = started.get(request);
    if (start !== undefined)
      duration.observe({ procedure, method: request.method }, Number(process.hrtime.bigint() - start) / 1e9);
    const code = problemCodeOf(reply);
    if (code !== undefined) problems.inc({ code, status: String(status) });
  });

  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '').split('?')[0];
    if (request.method !== 'GET' || path !== '/metrics') {
      response.writeHead(404, { 'content-type': 'application/problem+json; charset=utf-8' });
      response.end(
        JSON.stringify({
          type: 'urn:proceed:problem:route-not-found',
          title: 'Route not found',
          status: 404,
          detail: 'Only GET /metrics is served here',
          code: 'ROUTE_NOT_FOUND',
        }),
      );
      return;
    }
    registry.metrics().then(
      (text) => {
        response.writeHead(200, { 'content-type': registry.contentType });
        response.end(text);
      },
      (error: unknown) => {
        app.log.error({ err: error }, 'Metrics could not be collected');
        response.writeHead(500, { 'content-type': 'application/problem+json; charset=utf-8' });
        response.end(
          JSON.stringify({
            type: 'urn:proceed:problem:internal',
            title: 'Internal server error',
            status: 500,
            detail: 'The metrics could not be collected',
            code: 'INTERNAL',
          }),
        );
      },
    );
  });

  app.onListen(async () => {
    await new Promise<void>((resolve, reject) => {
      server.once('error', (error) =>
        reject(
          new ProceedConfigError(`metricsPlugin: cannot listen on port ${options.port}: ${error.message}`),
        ),
      );
      server.listen(options.port, options.host ?? '127.0.0.1', () => resolve());
    });
    const { address, port } = server.address() as AddressInfo;
    const url = `http://${address.includes(':') ? `[${address}]` : address}:${port}/metrics`;
    app.log.info(`Metrics at ${url}`);
    options.onListening?.(url);
  });
  app.onClose(async () => {
    if (!server.listening) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
}
