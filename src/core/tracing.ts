/**
 * What the core tells a tracer of one call (docs/observability.md): each step it runs, so that
 * the tracer can time it in a span of its own. The core knows no tracing library; an adapter puts
 * a `StepTracer` on the call only when the request is being recorded, so an untraced call pays
 * one property read per step.
 */

/** The steps of a call that get a span each. */
export type StepKind = 'guard' | 'validation' | 'handler' | 'serialization' | 'event';

export interface StepTracer {
  /**
   * Runs one step inside a span named for `kind` and `name` (a guard's name, the procedure's):
   * returns what `run` returns, a promise included, ending the span when it settles. A step that
   * runs the app's code (a guard, the handler) runs with its span as the active one, so that the
   * spans of a database driver nest under it.
   */
  step<T>(kind: StepKind, name: string, run: () => T): T;
  /**
   * Runs a step that answers with an async iterable (an event stream's handler): its span stays
   * open, and active at each pull, until the iterable ends, fails or is returned, so that what the
   * handler does between events nests under it; or until `stopped` aborts (the reader left, or
   * a HEAD never reads it). Anything else `start` returns is handed back as it is, its span ended.
   */
  stream(kind: StepKind, name: string, start: () => unknown, stopped: AbortSignal): unknown;
}
