/**
 * What `app.fetch` needs of an app (src/http/fetch.ts): its routes and the settings of each rule,
 * resolved once when the app is ready.
 */
import type { IdempotencySettings } from '../core/idempotency.js';
import type { BaseContext, RequestInfo, RequestLog } from '../core/request-context.js';
import type { MountedRoute } from '../core/route-table.js';
import type { UploadOptions } from '../core/uploads.js';
import type { AppRoute } from './app-routes.js';
import type { TrustProxy } from './client-address.js';
import type { CodingChoice } from './compression.js';
import type { CookieSigner } from './cookies.js';
import type { CorsPolicy } from './cors.js';
import type { Answer } from './observed.js';
import type { OpenSockets } from './open-sockets.js';
import type { RateLimits } from './rate-limit.js';
import type { Spools } from './spool.js';
import type { RequestTracing } from './tracing.js';

type MaybePromise<T> = T | Promise<T>;

/** Request headers by lower-case name, as Node gives them: a repeated one joined with ", ". */
export type HeaderRecord = Record<string, string | string[] | undefined>;

/** What a fetch handler needs of an app: its routes and the settings of each rule. */
export interface FetchCore {
  readonly routes: readonly MountedRoute[];
  /** The app's routes beside its procedures: health, the docs UI, the user's own. */
  readonly appRoutes: readonly AppRoute[];
  buildContext(request: RequestInfo): MaybePromise<BaseContext>;
  readonly userSource: () => string | undefined;
  readonly entityTags: boolean;
  readonly requestIds: boolean;
  readonly exposeErrors: boolean;
  readonly bodyLimit: number;
  /** Bodies of `above` bytes or more are compressed, by `encode`; undefined: never. */
  readonly compression:
    | {
        readonly above: number;
        readonly codings: CodingChoice<string>;
        encode(body: string, coding: string, size: number): Uint8Array | Promise<Uint8Array>;
      }
    | undefined;
  readonly cookieSigner: CookieSigner;
  readonly csrfTrusted: ReadonlySet<string> | undefined;
  /** The app's upload limits, and where large files wait (undefined on Workers: in memory). */
  readonly uploads: UploadOptions | undefined;
  readonly spools: Spools | undefined;
  readonly idempotency: () => { settings: IdempotencySettings; creates: boolean } | undefined;
  /** Traces each request; undefined: nothing is traced (docs/observability.md). */
  readonly tracing: RequestTracing | undefined;
  /** Calls the listener when the app begins closing (open event streams end then); returns its removal. */
  readonly onClosing: (listener: () => void) => () => void;
  /** The app's open WebSockets, against its limit. */
  readonly sockets: OpenSockets;
  /** The app's open event streams, against each client's limit. */
  readonly streams: OpenSockets;
  /** Ready for traffic: not draining or closing (readiness answers 503 otherwise). */
  readonly serving: () => boolean;
  /** Closing: a request that arrives now is refused with 503 (draining still serves it). */
  readonly closing: () => boolean;
  readonly rateLimits: RateLimits;
  /** The app's CORS rules; undefined: no CORS. */
  readonly cors: CorsPolicy | undefined;
  readonly trustProxy: TrustProxy;
  readonly entityTag: (body: string, version?: string) => string;
  /** The opaque part of a file's tag, from its bytes in memory (src/http/files.ts). */
  readonly bytesTag: (bytes: Uint8Array) => string;
  readonly matchingTag: (ifNoneMatch: string | undefined, tag: string) => string | undefined;
  readonly ifMatchHolds: (ifMatch: string, tag: string) => boolean;
  /** A new request id: a UUID, or the app's next request number with `requestIds: false`. */
  readonly newRequestId: () => string;
  readonly log: { error(object: object, message: string): void; warn(object: object, message: string): void };
  /** The app's logger for one request, by its id (`ctx.request.log`). */
  readonly requestLogOf: (id: string) => RequestLog;
  readonly observe: ((answer: Answer) => void) | undefined;
  /** One line per request at `info`, as on Node; undefined when the app logs nothing. */
  readonly requestLog:
    | {
        /** Whether a line would be written now (the level may change while the app runs). */
        enabled(): boolean;
        write(entry: RequestLogEntry): void;
        /** Whether a request is also logged as it arrives ("incoming request", at `debug`). */
        arrivals(): boolean;
        arrived(entry: Omit<RequestLogEntry, 'status' | 'milliseconds' | 'completed'>): void;
      }
    | undefined;
}

/** What the request log writes of a request. */
export interface RequestLogEntry {
  id: string;
  method: string;
  url: string;
  host: string | undefined;
  ip: string;
  /** Its `Accept-Version`, as Node's line names it. */
  version: string | undefined;
  /** The peer's port, where the runtime tells it. */
  port: number | undefined;
  status: number;
  milliseconds: number;
  /** False when the client left before the answer was made (where the adapter can tell). */
  completed: boolean;
}
