/**
 * The metrics plugin (docs/metrics.md): Prometheus text from prom-client on a port of its own,
 * never on the API's. Per procedure: requests by method and status class, latency, in flight,
 * problems by code; the process: event-loop lag, memory, CPU (prom-client's defaults); and, when
 * the app says how, its database pool.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Counter, collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import { ProceedConfigError, ProceedError, toProblem } from '../core/errors.js';
import { optionKeys, portOf, refuseUnknownOptions } from '../core/options.js';
import { refusedOnWorkers, runtime } from '../http/runtime.js';
import type { Answer, App, ObservedRoute } from '../server/app.js';

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
  /**
   * Default: the interface the API listens on (`listen({ host })`, `proceed start --host`, `HOST`),
   * itself 127.0.0.1 unless told otherwise.
   */
  host?: string;
  /** The database pool to report, read at each scrape. */
  pool?: () => PoolStats;
  /** Called with the metrics address once it listens (`http://127.0.0.1:9464/metrics`). */
  onListening?: (url: string) => void;
}

/** Seconds; from a fast cached read to a slow write behind a lock. */
const latencyBuckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

const statusClasses = ['1xx', '2xx', '3xx', '4xx', '5xx'] as const;

interface RouteStats {
  label: string;
  method: string;
  /** Answers by status class (1xx … 5xx), and how many of them prom-client has been given. */
  answered: number[];
  reported: number[];
  /** Answers per latency bucket (not cumulative; above the last bound: only in the count). */
  buckets: number[];
  /** Total seconds of every answer. */
  seconds: number;
}

/** A problem+json answer of the metrics listener, rendered as every other problem is. */
function answerProblem(response: ServerResponse, error: ProceedError): void {
  const problem = toProblem(error);
  response.writeHead(problem.status, {
    ...problem.headers,
    'content-type': 'application/problem+json; charset=utf-8',
    'x-content-type-options': 'nosniff',
  });
  response.end(JSON.stringify(problem.body));
}

/**
 * The answers counted per route and method. The hot path only adds to plain numbers; prom-client
 * reads them at each scrape (`collect`). Its own inc/observe hash and validate the labels on every
 * call, which measured a quarter of the throughput of a small route (docs/metrics.md, "Cost").
 */
class RouteStatsTable {
  readonly routes: RouteStats[] = [];
  /** The stats of a route and method, made at its first answer and found again by its route. */
  readonly #byRoute = new Map<ObservedRoute | undefined, Record<string, RouteStats>>();

  #statsOf(answer: Answer): RouteStats {
    let byMethod = this.#byRoute.get(answer.route);
    if (byMethod === undefined) {
      byMethod = {};
      this.#byRoute.set(answer.route, byMethod);
    }
    let stats = byMethod[answer.method];
    if (stats === undefined) {
      stats = {
        // Its procedure, the health routes (or another route) by path, or nothing matched.
        label: answer.route?.procedure ?? answer.route?.path ?? 'unmatched',
        method: answer.method,
        answered: [0, 0, 0, 0, 0],
        reported: [0, 0, 0, 0, 0],
        buckets: new Array<number>(latencyBuckets.length).fill(0),
        seconds: 0,
      };
      byMethod[answer.method] = stats;
      this.routes.push(stats);
    }
    return stats;
  }

  count(answer: Answer): void {
    const stats = this.#statsOf(answer);
    const index = Math.floor(answer.status / 100) - 1;
    if (index >= 0 && index < 5) stats.answered[index] = (stats.answered[index] ?? 0) + 1;
    stats.seconds += answer.seconds;
    const bucket = latencyBuckets.findIndex((bound) => answer.seconds <= bound);
    if (bucket >= 0) stats.buckets[bucket] = (stats.buckets[bucket] ?? 0) + 1;
  }
}

/** The app's metrics in `registry`: requests, in flight, problems, the pool. Returns the problems' counter. */
function defineMetrics(
  registry: Registry,
  table: RouteStatsTable,
  inFlight: () => number,
  openStreams: () => App['openStreams'],
  pool: (() => PoolStats) | undefined,
): Counter<'code' | 'status'> {
  new Counter({
    name: 'proceed_http_requests_total',
    help: 'Requests answered, by procedure (or route), method and status class',
    labelNames: ['procedure', 'method', 'status_class'] as const,
    registers: [registry],
    collect() {
      for (const route of table.routes) {
        statusClasses.forEach((statusClass, index) => {
          const delta = (route.answered[index] ?? 0) - (route.reported[index] ?? 0);
          if (delta === 0) return;
          route.reported[index] = route.answered[index] ?? 0;
          this.inc({ procedure: route.label, method: route.method, status_class: statusClass }, delta);
        });
      }
    },
  });
  new Gauge({
    name: 'proceed_http_requests_in_flight',
    help: 'Requests received and not yet answered',
    registers: [registry],
    collect() {
      this.set(inFlight());
    },
  });
  new Gauge({
    name: 'proceed_streams_open',
    help: 'WebSockets and event streams open now, by kind',
    labelNames: ['kind'] as const,
    registers: [registry],
    collect() {
      const { sockets, eventStreams } = openStreams();
      this.set({ kind: 'websocket' }, sockets);
      this.set({ kind: 'event_stream' }, eventStreams);
    },
  });
  if (pool !== undefined)
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
  return new Counter({
    name: 'proceed_problems_total',
    help: 'Problem answers, by code (VALIDATION_FAILED, INTERNAL, …) and status',
    labelNames: ['code', 'status'] as const,
    registers: [registry],
  });
}

/** The listener of `GET /metrics`, on a port of its own. */
function metricsServer(app: App, registry: Registry, table: RouteStatsTable): Server {
  return createServer((request, response) => {
    const path = (request.url ?? '').split('?')[0];
    if (request.method !== 'GET' || path !== '/metrics') {
      answerProblem(response, new ProceedError('ROUTE_NOT_FOUND', 'Only GET /metrics is served here'));
      return;
    }
    Promise.all([processMetrics().metrics(), registry.metrics()]).then(
      ([processText, appText]) => {
        response.writeHead(200, { 'content-type': registry.contentType });
        response.end(`${processText}\n${appText}\n${durationText(table.routes)}`);
      },
      (error: unknown) => {
        app.log.error({ err: error }, 'Metrics could not be collected');
        answerProblem(response, new ProceedError('INTERNAL', 'The metrics could not be collected'));
      },
    );
  });
}

/**
 * Serves Prometheus metrics on their own port while the app listens.
 *
 * @example
 * await app.register(metricsPlugin, { port: 9464, pool: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }) });
 */
export async function metricsPlugin(app: App, options: MetricsPluginOptions): Promise<void> {
  if (!runtime.listens) throw refusedOnWorkers('metricsPlugin', 'serves /metrics on a port of its own');
  refuseUnknownOptions(
    'metricsPlugin',
    options,
    optionKeys<MetricsPluginOptions>()('port', 'host', 'pool', 'onListening'),
    { required: true },
  );
  if (typeof options?.port !== 'number' || portOf(options.port) === undefined)
    throw new ProceedConfigError(
      'metricsPlugin needs a port of its own (an integer from 0 to 65535; 0 for any free port)',
    );
  if (options.onListening !== undefined && typeof options.onListening !== 'function')
    throw new ProceedConfigError('metricsPlugin: onListening is a function of the metrics URL');
  const registry = new Registry();
  const table = new RouteStatsTable();
  const problems = defineMetrics(
    registry,
    table,
    app.countRequestsInFlight(),
    () => app.openStreams,
    options.pool,
  );
  app.observe((answer) => {
    table.count(answer);
    if (answer.problem !== undefined) problems.inc({ code: answer.problem, status: String(answer.status) });
  });

  const server = metricsServer(app, registry, table);
  app.onListen(async (listening) => {
    await new Promise<void>((resolve, reject) => {
      server.once('error', (error) =>
        reject(
          new ProceedConfigError(`metricsPlugin: cannot listen on port ${options.port}: ${error.message}`),
        ),
      );
      server.listen(options.port, options.host ?? listening.host, () => resolve());
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

let processRegistry: Registry | undefined;

/**
 * The process's own series (memory, CPU, event-loop lag, GC), made once per process: prom-client
 * starts an event-loop monitor and a GC observer for them that nothing can stop, so an app built
 * and closed many times (tests, embedders) must not start new ones each time.
 */
function processMetrics(): Registry {
  if (processRegistry === undefined) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

const durationName = 'proceed_http_request_duration_seconds';

/** A label value in the text format: backslash, double quote and newline escaped. */
function labelValue(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

/**
 * The latency histogram in Prometheus' text format, from the per-route counts: kept apart from
 * prom-client's Histogram, whose observe() costs a label hash per request.
 */
function durationText(routes: readonly RouteStats[]): string {
  const lines = [
    `# HELP ${durationName} Time from the request to its answer, by procedure (or route) and method`,
    `# TYPE ${durationName} histogram`,
  ];
  for (const route of routes) {
    const labels = `procedure="${labelValue(route.label)}",method="${labelValue(route.method)}"`;
    const count = route.answered.reduce((sum, each) => sum + each, 0);
    let cumulative = 0;
    latencyBuckets.forEach((bound, index) => {
      cumulative += route.buckets[index] ?? 0;
      lines.push(`${durationName}_bucket{le="${bound}",${labels}} ${cumulative}`);
    });
    lines.push(`${durationName}_bucket{le="+Inf",${labels}} ${count}`);
    lines.push(`${durationName}_sum{${labels}} ${route.seconds}`);
    lines.push(`${durationName}_count{${labels}} ${count}`);
  }
  return `${lines.join('\n')}\n`;
}
