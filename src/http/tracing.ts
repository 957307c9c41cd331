/**
 * What adapters tell a tracer of each request (docs/observability.md): its arrival, the route it
 * took, its answer. The app holds a `RequestTracing` only when one was given
 * (`createApp({ tracing: openTelemetry() })`); without it, adapters make no call here and
 * nothing is allocated per request.
 */
import type { StepTracer } from '../core/tracing.js';

/** A request as a tracer reads it, before it is routed. */
export interface TracedRequest {
  readonly method: string;
  /** The path, without the query string. */
  readonly path: string;
  /** `http` or `https`. */
  readonly scheme: string;
  /** A request header by lower-case name (`traceparent`, `host`, `user-agent`). */
  header(name: string): string | undefined;
}

/** One request's trace, from its arrival to its answer. */
export interface RequestTrace {
  /**
   * Whether the request's span records (is sampled). One that does not needs no route, status or
   * steps: adapters then only run the request in its context, which carries its trace onward.
   */
  readonly recording: boolean;
  /** Set while the request is recorded: the core's steps get spans of their own. */
  readonly steps: StepTracer | undefined;
  /** Runs `work` with the request's span active: what the app calls inside nests under it. */
  run<T>(work: () => T): T;
  /**
   * Keeps the request's context active in an emitter's listeners (Node's request and response,
   * whose events arrive from outside `run`).
   */
  bind<T extends object>(emitter: T): T;
  /** The request's id (`X-Request-Id`), on every request's span, a 404's as much as a route's. */
  identified(requestId: string): void;
  /** The route the request took: its template (`/api/posts/{id}`) and procedure. */
  routed(route: string, procedure: string | undefined): void;
  /** The error behind a 5xx answer, recorded on the request's span (its status is set at the end). */
  failed(error: unknown): void;
  /**
   * Ends the request's span with the answer's status, or none when the client left before an
   * answer was sent (a span another instrumentation made is left to it).
   */
  end(status: number | undefined): void;
}

/**
 * A stream's frames, each pulled with the request's context active, then `ended` once they end,
 * however they end. A runtime pulls a body in a context of its own (Deno's server, Node's
 * stream, whoever called app.fetch), where the spans a handler starts between events would begin
 * traces of their own, or ignore the request's sampling.
 */
export async function* framesInTrace(
  frames: AsyncGenerator<string, void, undefined>,
  trace: RequestTrace,
  ended?: () => void,
): AsyncGenerator<string> {
  try {
    while (true) {
      const next = await trace.run(() => frames.next());
      if (next.done === true) return;
      yield next.value;
    }
  } finally {
    try {
      // Cancelled, the frames end too, so that the handler's finally runs.
      await trace.run(() => frames.return(undefined));
    } finally {
      ended?.();
    }
  }
}

/**
 * One operation inside a request that is not a route of its own: an MCP message, carried by the
 * request to the MCP endpoint (docs/mcp.md). Its span is a child of the request's.
 */
export interface TracedOperation {
  /** The span's name (`tools/call getPost`). */
  readonly name: string;
  readonly attributes: Readonly<Record<string, string | number | boolean>>;
}

/** An operation's trace while it runs. */
export interface OperationTrace {
  /** Set while the operation is recorded: a procedure it calls times its steps under it. */
  readonly steps: StepTracer | undefined;
  /**
   * The operation failed though its request may still be answered 200 (a tool call's result
   * that is an error): `type` is its `error.type`, and an `error` that is the server's own (not a
   * client's mistake) marks the span as failed.
   */
  failed(type: string, error?: unknown): void;
}

/** What an operation sees where nothing traces it. */
export const untracedOperation: OperationTrace = { steps: undefined, failed: () => undefined };

export interface RequestTracing {
  /** A new request has arrived. */
  begin(request: TracedRequest): RequestTrace;
  /**
   * Runs `work` as an operation of the request being handled, under a span of its own, which
   * `describe` names (called only for a request being recorded). A tracer without it leaves
   * operations untraced (their request is traced all the same).
   */
  operation?<T>(describe: () => TracedOperation, work: (trace: OperationTrace) => Promise<T>): Promise<T>;
  /** `trace_id` and `span_id` of the active span, for log lines; undefined outside any trace. */
  logFields(): Record<string, string> | undefined;
}
