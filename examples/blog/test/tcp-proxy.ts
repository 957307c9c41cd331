/**
 * A TCP proxy, to make a real outage without touching what is behind it: in front of the
 * PostgreSQL server, `cut()` drops every connection and refuses new ones, `restore()` listens
 * again on the same port, `freeze()` passes nothing more either way until `thaw()`; in front of a blog instance, `target` may change and `drop()` cuts what
 * is open (a network that failed over).
 */
import { connect, createServer, type Server, type Socket } from 'node:net';

export class TcpProxy {
  /** Where new connections go: change it to send them elsewhere. */
  target: { host: string; port: number };
  readonly #sockets = new Set<Socket>();
  readonly #pairs = new Set<{ client: Socket; upstream: Socket | undefined }>();
  #frozen = false;
  #server: Server | undefined;
  port = 0;

  constructor(target: { host: string; port: number }) {
    this.target = target;
  }

  /** Listens (on a free port the first time, on the same port after a cut). */
  async start(): Promise<this> {
    const server = createServer((client) => {
      const pair: { client: Socket; upstream: Socket | undefined } = { client, upstream: undefined };
      this.#pairs.add(pair);
      this.#track(client, pair);
      // A frozen server takes the connection and says nothing: the client's connect times out.
      if (this.#frozen) client.pause();
      else this.#forward(pair);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    const address = server.address();
    if (address !== null && typeof address === 'object') this.port = address.port;
    this.#server = server;
    return this;
  }

  #track(socket: Socket, pair: { client: Socket; upstream: Socket | undefined }): void {
    this.#sockets.add(socket);
    // A side that closes closes the other, frozen or not: a connection the client gave up on
    // while frozen must not stay open to the database (its DROP DATABASE would wait on it).
    socket.on('close', () => {
      this.#sockets.delete(socket);
      this.#pairs.delete(pair);
      pair.client.destroy();
      pair.upstream?.destroy();
    });
    socket.on('error', () => {
      pair.client.destroy();
      pair.upstream?.destroy();
    });
  }

  #forward(pair: { client: Socket; upstream: Socket | undefined }): void {
    if (pair.upstream === undefined) {
      pair.upstream = connect(this.target.port, this.target.host);
      this.#track(pair.upstream, pair);
    }
    pair.client.pipe(pair.upstream).pipe(pair.client);
  }

  /**
   * A server that stops answering without closing anything (a hung host, a partition): nothing
   * more is passed either way, new connections are taken and left unanswered.
   */
  freeze(): void {
    this.#frozen = true;
    for (const { client, upstream } of this.#pairs) {
      client.unpipe();
      upstream?.unpipe();
      client.pause();
      upstream?.pause();
    }
  }

  /** Passes on again what was held, and answers the connections taken meanwhile. */
  thaw(): void {
    this.#frozen = false;
    for (const pair of this.#pairs) this.#forward(pair);
  }

  /** Every open connection dropped; new ones still taken, to `target`. */
  drop(): void {
    for (const socket of this.#sockets) socket.destroy();
  }

  /** The outage: every connection dropped, new ones refused. */
  async cut(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    this.drop();
    if (server !== undefined) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Listens again on the same port; a no-op while listening. */
  async restore(): Promise<this> {
    return this.#server === undefined ? this.start() : this;
  }
}
