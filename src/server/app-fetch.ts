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
import { newRequestId } from './request-id.js';
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
  /** Tells the app's observers of an answer; undefined when it has none. */
  readonly observe: ((answer: Answer) => void) | undefined;
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
    closing: () => lifecycle.phase === 'closing',
    cors: settings.cors,
    rateLimits: parts.rateLimits,
    trustProxy: settings.trustProxy,
    requestLog: !settings.logsRequests
      ? undefined
      : {
          enabled: () => log.isLevelEnabled('info'),
          write: ({ id, method, url, host, ip, status, milliseconds }) =>
            log.info(
              {
                reqId: id,
                // Shaped as Fastify's request serializer reads a request, so the line is Node's.
                req: { method, url, host, ip: ip === '' ? undefined : ip, headers: {} },
                res: { statusCode: status },
                responseTime: milliseconds,
              },
              'request completed',
            ),
        },
    entityTag,
    bytesTag,
    matchingTag,
    ifMatchHolds,
    newRequestId,
    log,
    observe: parts.observe,
  };
}
