/**
 * OpenTelemetry tracing for an app (docs/observability.md): `createApp({ tracing: openTelemetry() })`.
 * A SERVER span per request, named for its route and carrying the HTTP semantic conventions and
 * the procedure; a child span per guard, for the input's validation, the handler, the
 * serialization and each streamed event; `traceparent` honoured through the registered
 * propagator; and, where `@opentelemetry/instrumentation-http` made the request's span already,
 * that span named and completed instead of a second one.
 */
import {
  type Attributes,
  type Context,
  context,
  createContextKey,
  isSpanContextValid,
  propagation,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TextMapGetter,
  type Tracer,
  type TracerProvider,
  trace,
} from '@opentelemetry/api';
import { ProceedConfigError, ProceedError } from '../core/errors.js';
import { optionKeys, refuseUnknownOptions } from '../core/options.js';
import { redactedError } from '../core/redaction.js';
import type { StepKind, StepTracer } from '../core/tracing.js';
import {
  type OperationTrace,
  type RequestTrace,
  type RequestTracing,
  type TracedOperation,
  type TracedRequest,
  untracedOperation,
} from '../http/tracing.js';

// What another tracer implements to be given as `createApp({ tracing })`.
export type { StepKind, StepTracer } from '../core/tracing.js';
export type {
  OperationTrace,
  RequestTrace,
  RequestTracing,
  TracedOperation,
  TracedRequest,
} from '../http/tracing.js';

export interface OpenTelemetryOptions {
  /** Default: the global provider, which the OpenTelemetry SDK registers when it starts. */
  tracerProvider?: TracerProvider;
}

/**
 * Where `@opentelemetry/instrumentation-http` keeps, in the request's context, the span it made
 * and the route a framework found (the key `@opentelemetry/core` defines, made the same way).
 */
const rpcMetadataKey = createContextKey('OpenTelemetry SDK Context Key RPC_METADATA');

interface RpcMetadata {
  type: string;
  span?: Span;
  route?: string;
}

const headerGetter: TextMapGetter<TracedRequest> = {
  keys: () => [],
  get: (request, name) => request.header(name),
};

/** The methods the HTTP conventions name; any other is `_OTHER` (with the original kept). */
const knownMethods = new Set([
  'GET',
  'HEAD',
  'POST',
  'PUT',
  'PATCH',
  'DELETE',
  'OPTIONS',
  'CONNECT',
  'TRACE',
]);

const stepNames: { readonly [K in StepKind]: (name: string) => string } = {
  guard: (name) => `guard ${name}`,
  validation: () => 'validate input',
  handler: (name) => `handler ${name}`,
  serialization: () => 'serialize output',
  event: () => 'event',
};

/** A client's mistake (a 4xx) is no error of the server's: only other failures mark a span. */
function isServerFailure(error: unknown): boolean {
  return !(error instanceof ProceedError) || error.status >= 500;
}

function markFailed(span: Span, error: unknown): void {
  if (!isServerFailure(error)) return;
  span.recordException(redactedError(error));
  span.setStatus({ code: SpanStatusCode.ERROR });
}

/**
 * An async iterable whose every pull runs in `active` (where the producer's spans nest), calling
 * `ended` once, with the error if any, when it is done, fails or is returned.
 */
function tracedIterable<T>(
  source: AsyncIterable<T>,
  active: Context,
  stopped: AbortSignal,
  ended: (error?: unknown) => void,
): AsyncIterable<T> {
  const iterator = context.with(active, () => source[Symbol.asyncIterator]());
  let open = true;
  const finish = (error?: unknown) => {
    if (!open) return;
    open = false;
    stopped.removeEventListener('abort', onStop);
    ended(error);
  };
  // A HEAD never reads the stream, a reader that leaves stops reading it: either is its end.
  const onStop = () => finish();
  if (stopped.aborted) finish();
  else stopped.addEventListener('abort', onStop, { once: true });
  const pull = (advance: () => Promise<IteratorResult<T>>): Promise<IteratorResult<T>> =>
    context.with(active, advance).then(
      (result) => {
        if (result.done === true) finish();
        return result;
      },
      (error: unknown) => {
        finish(error);
        throw error;
      },
    );
  return {
    [Symbol.asyncIterator]: () => ({
      next: () => pull(() => iterator.next()),
      return: (value?: unknown) => {
        // The reader left: the step is over now, whatever the handler's finally still does (on
        // workerd, what a request leaves pending once it has ended may never run).
        const returning = pull(() =>
          iterator.return === undefined
            ? Promise.resolve({ done: true, value } as IteratorResult<T>)
            : iterator.return(value),
        );
        finish();
        return returning;
      },
      throw: (error?: unknown) =>
        pull(() => (iterator.throw === undefined ? Promise.reject(error) : iterator.throw(error))),
    }),
  };
}

/** Runs a step in a span that is a child of `parent`, ending it when the step settles. */
function stepTracer(tracer: Tracer, parent: Context): StepTracer {
  return {
    stream(kind: StepKind, name: string, start: () => unknown, stopped: AbortSignal): unknown {
      const span = tracer.startSpan(stepNames[kind](name), { attributes: { 'proceed.step': kind } }, parent);
      const active = trace.setSpan(parent, span);
      let source: unknown;
      try {
        source = context.with(active, start);
      } catch (error) {
        markFailed(span, error);
        span.end();
        throw error;
      }
      if (typeof (source as AsyncIterable<unknown> | null)?.[Symbol.asyncIterator] !== 'function') {
        span.end();
        return source;
      }
      return tracedIterable(source as AsyncIterable<unknown>, active, stopped, (error) => {
        if (error !== undefined) markFailed(span, error);
        span.end();
      });
    },
    step<T>(kind: StepKind, name: string, run: () => T): T {
      const span = tracer.startSpan(stepNames[kind](name), { attributes: { 'proceed.step': kind } }, parent);
      let result: T;
      try {
        result = context.with(trace.setSpan(parent, span), run);
      } catch (error) {
        markFailed(span, error);
        span.end();
        throw error;
      }
      // A native promise is what the core itself waits for: anything else, a thenable included, is
      // handed back as it is, so that a traced call does what an untraced one does.
      if (!(result instanceof Promise)) {
        span.end();
        return result;
      }
      return result.then(
        (value) => {
          span.end();
          return value;
        },
        (error: unknown) => {
          markFailed(span, error);
          span.end();
          throw error;
        },
      ) as T;
    },
  };
}

/** The server's address and the client's software, as the HTTP conventions name them. */
function requestDetails(request: TracedRequest): Attributes {
  const details: Attributes = {};
  const host = request.header('host');
  if (host !== undefined) {
    const colon = host.lastIndexOf(':');
    const bracket = host.lastIndexOf(']');
    if (colon > bracket) {
      details['server.address'] = host.slice(0, colon);
      const port = Number(host.slice(colon + 1));
      if (Number.isInteger(port)) details['server.port'] = port;
    } else details['server.address'] = host;
  }
  const agent = request.header('user-agent');
  if (agent !== undefined) details['user_agent.original'] = agent;
  return details;
}

/** A request under its own SERVER span, or under the one an HTTP instrumentation made. */
class OpenTelemetryTrace implements RequestTrace {
  readonly recording: boolean;
  readonly steps: StepTracer | undefined;
  readonly #span: Span;
  readonly #context: Context;
  readonly #method: string;
  /** Set when another instrumentation owns the span: it names and ends it. */
  readonly #metadata: RpcMetadata | undefined;
  #error: unknown;
  #ended = false;

  constructor(tracer: Tracer, request: TracedRequest) {
    const active = context.active();
    const metadata = active.getValue(rpcMetadataKey) as RpcMetadata | undefined;
    const method = request.method.toUpperCase();
    this.#method = knownMethods.has(method) ? method : 'HTTP';
    if (metadata?.type === 'http' && metadata.span !== undefined) {
      this.#metadata = metadata;
      this.#span = metadata.span;
      this.#context = active;
    } else {
      const parent = propagation.extract(active, request, headerGetter);
      const attributes: Attributes = {
        'http.request.method': knownMethods.has(method) ? method : '_OTHER',
        'url.path': request.path,
        'url.scheme': request.scheme,
      };
      if (!knownMethods.has(method)) attributes['http.request.method_original'] = request.method;
      this.#span = tracer.startSpan(this.#method, { kind: SpanKind.SERVER, attributes }, parent);
      this.#context = trace.setSpan(parent, this.#span);
      // What a sampler does not need is read only for a span that records.
      if (this.#span.isRecording()) this.#span.setAttributes(requestDetails(request));
    }
    this.recording = this.#span.isRecording();
    this.steps = this.recording ? stepTracer(tracer, this.#context) : undefined;
  }

  run<T>(work: () => T): T {
    return context.with(this.#context, work);
  }

  bind<T extends object>(emitter: T): T {
    return context.bind(this.#context, emitter);
  }

  identified(requestId: string): void {
    if (this.#span.isRecording()) this.#span.setAttribute('proceed.request_id', requestId);
  }

  routed(route: string, procedure: string | undefined): void {
    // instrumentation-http names its span from the route at the answer, and sets http.route.
    if (this.#metadata !== undefined) this.#metadata.route = route;
    if (!this.#span.isRecording()) return;
    this.#span.updateName(`${this.#method} ${route}`);
    this.#span.setAttribute('http.route', route);
    if (procedure !== undefined) this.#span.setAttribute('proceed.procedure', procedure);
  }

  failed(error: unknown): void {
    this.#error = error;
    // Now, not at the end: a span instrumentation-http made may have ended by then.
    if (this.#span.isRecording()) this.#span.recordException(redactedError(error));
  }

  end(status: number | undefined): void {
    if (this.#ended) return;
    this.#ended = true;
    // instrumentation-http names, completes and ends a span it made itself.
    if (this.#metadata !== undefined) return;
    const span = this.#span;
    if (status === undefined) {
      span.end();
      return;
    }
    if (status >= 500) {
      const error = this.#error;
      span.setStatus({ code: SpanStatusCode.ERROR });
      span.setAttribute('error.type', error instanceof Error ? error.name : String(status));
    }
    span.setAttribute('http.response.status_code', status);
    span.end();
  }
}

/**
 * An operation under the active request's span: a SERVER span of its own, as the conventions for
 * MCP name one (`tools/call getPost`, `mcp.method.name`, `gen_ai.tool.name`), with the steps of
 * the procedure it calls under it. A request the sampler left out gets none.
 */
function traceOperation<T>(
  tracer: Tracer,
  describe: () => TracedOperation,
  work: (trace: OperationTrace) => Promise<T>,
): Promise<T> {
  const parent = context.active();
  if (trace.getSpan(parent)?.isRecording() !== true) return work(untracedOperation);
  const operation = describe();
  const span = tracer.startSpan(
    operation.name,
    { kind: SpanKind.SERVER, attributes: operation.attributes },
    parent,
  );
  const active = trace.setSpan(parent, span);
  const traced: OperationTrace = {
    steps: stepTracer(tracer, active),
    failed(type, error) {
      span.setAttribute('error.type', type);
      if (error !== undefined) markFailed(span, error);
    },
  };
  const ended = (error?: unknown) => {
    if (error !== undefined) {
      const type =
        error instanceof ProceedError ? error.code : error instanceof Error ? error.name : 'unknown';
      span.setAttribute('error.type', type);
      markFailed(span, error);
    }
    span.end();
  };
  let working: Promise<T>;
  try {
    working = context.with(active, () => work(traced));
  } catch (error) {
    ended(error);
    throw error;
  }
  return working.then(
    (value) => {
      ended();
      return value;
    },
    (error: unknown) => {
      ended(error);
      throw error;
    },
  );
}

/**
 * Traces every request of the app with OpenTelemetry: pass it as `createApp({ tracing })`.
 * Spans go to the global tracer provider unless another is given; with no SDK started, they
 * are the API's no-op spans and no step is timed.
 *
 * @example
 * import { openTelemetry } from 'proceedjs/opentelemetry';
 * const app = createApp({ tracing: openTelemetry() });
 */
export function openTelemetry(options: OpenTelemetryOptions = {}): RequestTracing {
  refuseUnknownOptions('openTelemetry', options, optionKeys<OpenTelemetryOptions>()('tracerProvider'));
  const provider = options.tracerProvider ?? trace.getTracerProvider();
  if (typeof provider?.getTracer !== 'function')
    throw new ProceedConfigError('openTelemetry: tracerProvider must be an OpenTelemetry TracerProvider');
  const tracer = provider.getTracer('proceedjs');
  return {
    begin: (request) => new OpenTelemetryTrace(tracer, request),
    operation: (describe, work) => traceOperation(tracer, describe, work),
    logFields() {
      const span = trace.getSpan(context.active());
      if (span === undefined) return undefined;
      const spanContext = span.spanContext();
      // The API's no-op spans (no SDK started) carry no ids worth writing.
      if (!isSpanContextValid(spanContext)) return undefined;
      const { traceId, spanId, traceFlags } = spanContext;
      return { trace_id: traceId, span_id: spanId, trace_flags: traceFlags.toString(16).padStart(2, '0') };
    },
  };
}
