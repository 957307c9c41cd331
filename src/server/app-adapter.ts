/**
 * An app's Fastify adapter, where it has one: on Node with `proceedjs`, made when the app first
 * asks for `app.server` (docs/deployment.md, "Fastify: the escape hatch"); elsewhere `app.server`
 * and `app.inject()` say what serves the app instead.
 */
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { ProceedConfigError } from '../core/errors.js';
import type { MountedRoute } from '../core/route-table.js';
import type { Answer } from '../http/observed.js';
import { runtime } from '../http/runtime.js';
import type { AdapterHost, FastifyAdapter, NodeAdapters } from './fastify-adapter.js';

/** What serves an app without the Fastify adapter: Node's own http module, or app.fetch. */
const servedBy = (): string =>
  runtime.serve === undefined && runtime.listens ? "Node's own http module" : 'app.fetch';

/** What of the app the adapter is set up with when it is made after routes and plugins. */
export interface AdapterState {
  /** Whether the app is ready: too late for Fastify then. */
  loaded(): boolean;
  routes(): readonly MountedRoute[];
  /** The app's observers, when it has some. */
  observer(): ((answer: Answer) => void) | undefined;
  /** The app's in-flight count, when it counts. */
  counter(): { arrived: () => void; answered: () => void } | undefined;
}

export class AppAdapter {
  readonly #adapters: NodeAdapters | undefined;
  readonly #host: AdapterHost;
  readonly #state: AdapterState;
  #made: FastifyAdapter | undefined;

  constructor(adapters: NodeAdapters | undefined, host: AdapterHost, state: AdapterState) {
    this.#adapters = adapters;
    this.#host = host;
    this.#state = state;
  }

  /** The Fastify adapter, once made. */
  get made(): FastifyAdapter | undefined {
    return this.#made;
  }

  /** `app.server`: the Fastify instance, made now on Node if it was not. */
  server(): FastifyInstance {
    if (this.#made !== undefined) return this.#made.server;
    if (this.#adapters === undefined)
      throw new ProceedConfigError(
        `app.server is the Fastify instance of the Node adapter, and this app has none: on ${runtime.name} it serves through ${servedBy()}; add routes with app.route() (docs/routes.md)`,
      );
    if (this.#state.loaded())
      throw new ProceedConfigError(
        "app.server after the app is ready: Fastify is loaded when an app first asks for app.server, and this app got ready without it (it serves through Node's own http module); ask for app.server as the app is set up, before app.listen(), app.inject(), app.ready() or app.fetch (docs/deployment.md)",
      );
    const made = this.#adapters.fastify(this.#host);
    this.#made = made;
    made.mount(this.#state.routes());
    const observer = this.#state.observer();
    if (observer !== undefined) made.observe(observer);
    const counter = this.#state.counter();
    if (counter !== undefined) made.countRequests(counter.arrived, counter.answered);
    return made.server;
  }

  /** `app.inject()`: through Fastify when the app has it, else straight into the pipeline on Node. */
  inject(request: InjectOptions | string, ready: () => Promise<void>): Promise<LightMyRequestResponse> {
    if (this.#made !== undefined) return this.#made.inject(request);
    const adapters = this.#adapters;
    if (adapters !== undefined) return ready().then(() => adapters.inject(this.#host, request));
    return Promise.reject(
      new ProceedConfigError(
        `app.inject() needs the Fastify adapter, which this app has not on ${runtime.name} (it serves through ${servedBy()}): send a Request to app.fetch instead`,
      ),
    );
  }
}
