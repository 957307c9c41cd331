/**
 * `app.fetch` as the app hands it out: made once the app is ready (a start-up that failed is tried
 * again by the next request), called in the request's own turn from then on, and counting the
 * requests in flight when a plugin asks (`app.countRequestsInFlight()`, docs/metrics.md).
 */
import type { AppPipeline, PipelineHandler } from '../http/fetch.js';
import { whenBodyEnds } from '../http/pulled-stream.js';

export type FetchHandler = (request: Request, argument?: unknown) => Promise<Response>;

export class FetchEntry {
  readonly #create: () => Promise<AppPipeline>;
  /** Called at the first `fetch`, not at the first request of another adapter. */
  #firstFetch: (() => void) | undefined;
  #made: Promise<AppPipeline> | undefined;
  /** The pipeline, once made. */
  #ready: AppPipeline | undefined;
  #inFlight = 0;
  #counts = false;

  constructor(create: () => Promise<AppPipeline>, firstFetch?: () => void) {
    this.#create = create;
    this.#firstFetch = firstFetch;
  }

  /** The pipeline, made on the first call. */
  handler(): Promise<AppPipeline> {
    if (this.#made === undefined) {
      const made = this.#create();
      this.#made = made;
      made.then(
        (handle) => {
          if (this.#made === made) this.#ready = handle;
        },
        // A start-up that failed is tried again by the next request, not remembered forever
        // (without the Fastify adapter: on Node, Fastify keeps a failed start-up's error).
        () => {
          if (this.#made === made) this.#made = undefined;
        },
      );
    }
    return this.#made;
  }

  readonly fetch = (request: Request, argument?: unknown): Promise<Response> => {
    if (this.#firstFetch !== undefined) {
      const first = this.#firstFetch;
      this.#firstFetch = undefined;
      first();
    }
    // Counted before anything of it runs: a handler that reads the count counts its own request.
    const counted = this.#counts;
    if (counted) this.#inFlight++;
    // Once ready, the handler is called in this turn: no promise to wait for on every request.
    const ready = this.#ready;
    let answer: Promise<Response>;
    try {
      answer =
        ready === undefined
          ? this.handler().then((made) => made.fetch(request, argument))
          : ready.fetch(request, argument);
    } catch (error) {
      // A failure before the handler's own promise (the tracer's start, say) still uncounts it.
      answer = Promise.reject(error);
    }
    return counted ? this.#countedUntilSent(answer) : answer;
  };

  /**
   * The neutral handler, for an adapter that writes its own answers (src/server/node-http.ts);
   * that adapter counts its requests with `arrived` and `answered`.
   */
  readonly handle: PipelineHandler = (request, argument) => {
    const ready = this.#ready;
    if (ready !== undefined) return ready.handle(request, argument);
    return this.handler().then((made) => made.handle(request, argument));
  };

  /** Whether requests are counted (a plugin asked). */
  get counting(): boolean {
    return this.#counts;
  }

  /** Starts counting (a listener per request from now on); returns the reader of the count. */
  countInFlight(): () => number {
    this.#counts = true;
    return () => this.#inFlight;
  }

  /** What another adapter calls as it receives a request and once its answer is sent. */
  readonly arrived = (): void => {
    this.#inFlight++;
  };

  readonly answered = (): void => {
    this.#inFlight--;
  };

  /** Uncounts the request once its answer is sent: a body's end, or at once without one. */
  #countedUntilSent(answer: Promise<Response>): Promise<Response> {
    return answer.then(
      (response) => {
        const ends = whenBodyEnds(response.body);
        if (ends === undefined) this.answered();
        else void ends.then(this.answered);
        return response;
      },
      (error: unknown) => {
        this.answered();
        throw error;
      },
    );
  }
}
