/**
 * What `app.fetch` is given of an app (src/http/fetch-core.ts), from its settings and its parts,
 * once, when the app is ready.
 */
import type { Logger } from 'pino';
import type { ContextPipeline } from '../core/context.js';
import type { MountedRoute } from '../core/route-table.js';
import type { AppRoute } from '../http/app-routes.js';
import { bytesTag, entityTag, ifMatchHolds, matchingTag } from '../http/entity-tags.js';
import type { FetchCore } from '../http/fetch-core.js';
import type { Answer } from '../http/observed.js';
import type { IdempotencyRuntime } from '../http/procedure-call.js';
import type { RateLimits } from '../http/rate-limit.js';
import { runtime } from '../http/runtime.js';
import type { Spools } from '../http/spool.js';
import { encoded, nodeCodings } from './http-cache.js';
import type { Lifecycle } from './lifecycle.js';
import type { TraceFields } from './log-output.js';
import { newRequestId } from './request-id.js';
import { field, RequestLines } from './request-lines.js';
import type { AppSettings } from './settings.js';

export interface AppParts {
  readonly routes: readonly MountedRoute[];
  readonly appRoutes: readonly AppRoute[];
  readonly context: ContextPipeline;
  readonly lifecycle: Lifecycle;
  readonly rateLimits: RateLimits;
  readonly spools: Spools;
  readonly log: Logger;
  readonly userSource: () => string | undefined;
  readonly idempotency: () => IdempotencyRuntime | undefined;
  /** Runs `task` as the app closes. */
  readonly onClose: (task: () => void) => void;
  /** Tells the app's observers of an answer; undefined when it has none. */
  readonly observe: ((answer: Answer) => void) | undefined;
}

/**
 * The pipeline's request line: Node's line (src/server/request-lines.ts), held and written once per
 * turn, as on the Fastify adapter; the lines held are written when the app closes too.
 */
function requestLog(
  log: Logger,
  traceFields: TraceFields | undefined,
  onClose: (task: () => void) => void,
): FetchCore['requestLog'] {
  const enabled = () => log.isLevelEnabled('info');
  const arrivals = () => log.isLevelEnabled('debug');
  const arrived: NonNullable<FetchCore['requestLog']>['arrived'] = ({ id, method, url, host, ip, version }) =>
    // Shaped as a request the app logger's serializer reads, so the line is the Fastify adapter's.
    log.debug(
      { reqId: id, req: { method, url, host, ip, headers: { 'accept-version': version } } },
      'incoming request',
    );
  // A Worker logs through console, a line at a time: pino's own line there.
  if (!runtime.hasStandardOutput)
    return {
      enabled,
      arrivals,
      arrived,
      write: ({ id, method, url, host, ip, status, milliseconds }) =>
        log.info(
          {
            reqId: id,
            // As before the lines were held: the Worker's console logger writes these fields.
            req: {
              method,
              url,
              host,
              ip: ip === '' ? undefined : ip,
              headers: {},
            },
            res: { statusCode: status },
            responseTime: milliseconds,
          },
          'request completed',
        ),
    };
  const lines = new RequestLines(traceFields);
  lines.attach(log);
  onClose(lines.writeHeld);
  // A server's requests name one host and a few clients: the last fields made are kept.
  let lastHost: string | undefined;
  let lastIp: string | undefined;
  let lastPort: number | undefined;
  let lastPeer = '';
  const peerOf = (host: string | undefined, ip: string, port: number | undefined) => {
    if (host !== lastHost || ip !== lastIp || port !== lastPort) {
      lastHost = host;
      lastIp = ip;
      lastPort = port;
      lastPeer = `${field('host', host)}${field('remoteAddress', ip === '' ? undefined : ip)}${field('remotePort', port)}`;
    }
    return lastPeer;
  };
  return {
    enabled,
    arrivals,
    arrived,
    write: ({ id, method, url, host, ip, port, version, status, milliseconds, completed }) =>
      lines.hold({
        id,
        method,
        url,
        version,
        // As Fastify's request serializer reads a request, so the line is Node's.
        peer: peerOf(host, ip, port),
        status,
        milliseconds,
        completed,
      }),
  };
}

export function fetchCoreOf(settings: AppSettings, parts: AppParts): FetchCore {
  const { log, lifecycle } = parts;
  return {
    routes: parts.routes,
    appRoutes: parts.appRoutes,
    buildContext: (request) => parts.context.build(request),
    userSource: parts.userSource,
    entityTags: settings.entityTags,
    requestIds: settings.requestIds,
    exposeErrors: settings.exposeErrors,
    bodyLimit: settings.bodyLimit,
    compression:
      settings.compressAbove === undefined
        ? undefined
        : { above: settings.compressAbove, codings: nodeCodings, encode: encoded },
    cookieSigner: settings.cookieSigner,
    csrfTrusted: settings.csrfTrusted,
    uploads: settings.uploads,
    // Workers have no disk: there an upload's files stay in memory, under its limits.
    spools: runtime.spoolsToDisk ? parts.spools : undefined,
    idempotency: parts.idempotency,
    tracing: settings.tracing,
    serving: () => lifecycle.phase === 'serving',
    onClosing: lifecycle.onClosing,
    sockets: lifecycle.sockets,
    streams: lifecycle.streams,
    closing: () => lifecycle.phase === 'closing',
    cors: settings.cors,
    rateLimits: parts.rateLimits,
    trustProxy: settings.trustProxy,
    requestLog: settings.logsRequests
      ? requestLog(log, settings.tracing?.logFields, parts.onClose)
      : undefined,
    entityTag,
    bytesTag,
    matchingTag,
    ifMatchHolds,
    newRequestId: settings.requestIds ? newRequestId : settings.countRequest,
    log,
    requestLogOf: (id) => log.child({ reqId: id }),
    observe: parts.observe,
  };
}
