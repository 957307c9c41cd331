/**
 * An app's listening and closing (docs/deployment.md, "Shutdown"): on Node through its Fastify
 * adapter, on Bun and Deno through the runtime's own server serving `app.fetch`; then the
 * app's `onListen` listeners and the signal handlers.
 */
import type { Logger } from 'pino';
import { ProceedConfigError } from '../core/errors.js';
import { optionKeys, portOf, refuseUnknownOptions } from '../core/options.js';
import { type NativeServe, type NativeServer, runtime } from '../http/runtime.js';
import type { FastifyAdapter } from './fastify-adapter.js';
import type { FetchEntry, FetchHandler } from './fetch-entry.js';
import { exitOnSignals, type Lifecycle, type Listening, type ListenOptions } from './lifecycle.js';
import { listenNatively, stopNatively } from './native-listen.js';
import type { MaybePromise } from './options.js';
import type { AppSettings } from './settings.js';

/** What of the app listening needs. */
export interface ListeningApp {
  /** Built only to be read: `listen` refuses. */
  readonly inspected: boolean;
  readonly log: Logger;
  readonly settings: AppSettings;
  readonly lifecycle: Lifecycle;
  /** The Fastify adapter, once the app asked for it (`app.server`). */
  adapter(): FastifyAdapter | undefined;
  readonly listeners: ReadonlyArray<(listening: Listening) => MaybePromise<void>>;
  readonly fetch: FetchHandler;
  /** What `app.fetch` calls, for the Node server without Fastify (src/server/node-http.ts). */
  readonly entry: FetchEntry;
  /** Whether a route opens WebSockets. */
  opensSockets(): boolean;
  routeLines(): string[];
  /** Readies the app and refuses what app.fetch does not apply. */
  readyToFetch(): Promise<unknown>;
  /** The largest body any route takes: the runtime's own cap sits above it. */
  bodyLimit(): number;
  close(): Promise<void>;
  shutdown(): Promise<void>;
  /** The app's own closing steps (its `onClose` tasks, its spools). */
  closed(): Promise<void>;
}

const listenKeys = optionKeys<ListenOptions>()('port', 'host', 'handleSignals', 'logRoutes');

/**
 * `app.listen`'s options, refused as the CLI refuses its flags: `{ hostname }` listened on the
 * default host, and an empty `host` on every interface.
 */
function checkedListenOptions(options: ListenOptions): ListenOptions {
  refuseUnknownOptions('app.listen', options, listenKeys, { required: true });
  const { host, handleSignals, logRoutes } = options;
  // `port: process.env.PORT`, digits as text, is what Node's own listen takes too.
  const given: unknown = options.port;
  const port = portOf(given);
  if (given !== undefined && port === undefined)
    throw new ProceedConfigError(
      `app.listen: port must be an integer from 0 to 65535 (got ${JSON.stringify(given)})`,
    );
  if (host !== undefined && (typeof host !== 'string' || host.trim() === ''))
    throw new ProceedConfigError(
      `app.listen: host must name an interface (127.0.0.1, 0.0.0.0, ::), not ${JSON.stringify(host)}`,
    );
  for (const [name, value] of [
    ['handleSignals', handleSignals],
    ['logRoutes', logRoutes],
  ] as const)
    if (value !== undefined && typeof value !== 'boolean')
      throw new ProceedConfigError(
        `app.listen: ${name} must be true or false (got ${JSON.stringify(value)})`,
      );
  return port === undefined ? options : { ...options, port };
}

export class AppListener {
  readonly #app: ListeningApp;
  #nativeServer: NativeServer | undefined;
  #signalsInstalled = false;

  constructor(app: ListeningApp) {
    this.#app = app;
  }

  async listen(given: ListenOptions): Promise<string> {
    const options = checkedListenOptions(given);
    if (this.#app.inspected)
      throw new ProceedConfigError(
        'This app was built to be inspected (createApp({ inspect: true }), or loaded by proceed routes/openapi/manifest): it serves nothing',
      );
    if (!runtime.listens)
      throw new ProceedConfigError(
        "app.listen() on Cloudflare Workers: Workers listen for you; export the app's fetch instead (export default { fetch: app.fetch })",
      );
    if (runtime.serve !== undefined) return this.#listenNatively(runtime.serve, options);
    const { log } = this.#app;
    const adapter = this.#app.adapter();
    if (adapter === undefined) return this.#listenOnNode(options);
    await adapter.ready();
    if (options.logRoutes !== false) for (const line of this.#app.routeLines()) log.info(line);
    const host = options.host ?? '127.0.0.1';
    const { address, port } = await adapter.listen(options.port ?? 3030, host);
    await this.#listening({ host, port }, options);
    return address;
  }

  /** Tells the app's listeners where it listens (closing it if one fails), then takes the signals. */
  async #listening(listening: Listening, options: ListenOptions): Promise<void> {
    try {
      for (const listener of this.#app.listeners) await listener(listening);
    } catch (error) {
      await this.#app.close();
      throw error;
    }
    if (options.handleSignals !== false && !this.#signalsInstalled) {
      this.#signalsInstalled = true;
      exitOnSignals(this.#app.log, () => this.#app.shutdown());
    }
  }

  /** Node's own http module serving the pipeline, without Fastify (`proceedjs/node`). */
  #listenOnNode(options: ListenOptions): Promise<string> {
    const app = this.#app;
    const { settings, entry } = app;
    return this.#listenNatively(
      async ({ port, host }) =>
        // Loaded only here: Bun, Deno and a Worker's bundle never need Node's own server.
        (await import('./node-http.js')).serveOnNode({
          port,
          host,
          handle: entry.handle,
          lifecycle: app.lifecycle,
          timeouts: settings.timeouts,
          maxConnections: settings.maxConnections,
          upgrades: app.opensSockets(),
          exposeErrors: settings.exposeErrors,
          log: app.log,
          counting: () => entry.counting,
          arrived: entry.arrived,
          answered: entry.answered,
        }),
      options,
      'node:http',
    );
  }

  async #listenNatively(serve: NativeServe, options: ListenOptions, server?: string): Promise<string> {
    if (this.#nativeServer !== undefined) throw new ProceedConfigError('This app is listening already');
    const { settings, log } = this.#app;
    // Readies the app and refuses what app.fetch does not apply, before the port opens.
    await this.#app.readyToFetch();
    if (options.logRoutes !== false) for (const line of this.#app.routeLines()) log.info(line);
    const host = options.host ?? '127.0.0.1';
    const {
      server: listening,
      address,
      announce,
    } = await listenNatively(serve, {
      port: options.port ?? 3030,
      host,
      fetch: this.#app.fetch,
      bodyLimit: this.#app.bodyLimit(),
      keepAlive: settings.timeouts.keepAlive,
      exposeErrors: settings.exposeErrors,
      log,
      server,
    });
    this.#nativeServer = listening;
    await this.#listening({ host, port: listening.port }, options);
    announce();
    return address;
  }

  /**
   * Stops accepting connections, waits for in-flight requests (at most `shutdownTimeout`), then
   * runs the app's closing steps.
   */
  async close(): Promise<void> {
    const { settings, lifecycle, log } = this.#app;
    const adapter = this.#app.adapter();
    const timeout = settings.shutdownTimeout;
    const native = this.#nativeServer;
    if (native !== undefined) {
      this.#nativeServer = undefined;
      // New requests get a 503 from app.fetch; those in flight finish, up to the timeout.
      lifecycle.beginClosing();
      await stopNatively(native, timeout, log);
    }
    if (adapter !== undefined) return adapter.close(timeout);
    lifecycle.beginClosing();
    await this.#app.closed();
  }
}
