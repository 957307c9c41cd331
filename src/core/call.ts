/**
 * One call of a procedure as the core sees it, whatever the transport: what an adapter hands
 * over (a `Call`) and what it writes back (a `Reply`).
 */
import type { EventsAnswer } from './events.js';
import type { FileAnswer } from './files.js';
import type { BaseContext } from './request-context.js';
import type { ResponseControl } from './response.js';
import type { SocketAnswer } from './sockets.js';
import type { StepTracer } from './tracing.js';

/** One request, as the adapter hands it over. */
export interface Call {
  ctx: BaseContext & { user?: unknown };
  params: Record<string, string>;
  query: Record<string, unknown> | undefined;
  body: unknown;
  /**
   * The `If-Match` header, as sent, to a write; a read's is compared with its answer's tag by the
   * HTTP layer (src/http/procedure-answer.ts), so a read's call has none.
   */
  ifMatch?: string | undefined;
  /** Times each step in a span of its own; set by the adapter only for a request being traced. */
  trace?: StepTracer | undefined;
  /**
   * The input came whole, as arguments (an MCP tool call, src/server/procedure-calls.ts), not
   * from a query string: a refusal names them so.
   */
  givenAsArguments?: true;
}

/** What the adapter writes back. `body` is JSON text. */
export interface Reply {
  status: number;
  body: string;
  location: string | undefined;
  /** The version of the record answered with, for its `ETag` (`.versioned(read)`). */
  version: string | undefined;
  /** What the handler set with `response.header()` / `response.cookie()`; absent when nothing. */
  response?: ResponseControl<never>;
  /** A file to send instead of `body`, for a procedure declared with `.output(download())`. */
  file?: FileAnswer;
  /** Events to stream instead of `body`, for a procedure declared with `.output(eventStream())`. */
  events?: EventsAnswer;
  /** A WebSocket to open instead of `body`, for a procedure declared with `.output(webSocket())`. */
  socket?: SocketAnswer;
}

/**
 * One compiled call. Synchronous when every step is (a handler that answers from memory), so
 * that no promise is made where nothing waits; it never throws, a failure is a rejected promise.
 */
export type Invoke = (call: Call) => Reply | Promise<Reply>;

/** How a route is compiled beside its definition: what the app knows. */
export interface CompileOptions {
  /** What loads `ctx.user` (`authPlugin's userLoader (findUser)`), for the log of a guard that finds a field missing. */
  userSource?: () => string | undefined;
  /** The route's `rateLimit()` rules with a `key`; undefined when it has none. */
  keyedLimiter?: KeyedLimiter | undefined;
}

/**
 * Counts a call against a route's `rateLimit()` rules with a `key` (src/http/rate-limit.ts),
 * once its guards and input have passed: throws the 429 past a limit, and answers what gives the
 * counts of the rules counting failures back (called unless the call fails by the caller's
 * doing), if anything.
 */
export interface KeyedLimiter {
  count(ctx: unknown, input: unknown): Promise<(() => void) | undefined>;
}
