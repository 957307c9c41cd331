/**
 * A TCP proxy in front of the PostgreSQL server, to make a real outage for one app without
 * touching the shared server: `cut()` drops every connection and refuses new ones, `restore()`
 * listens again on the same port.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';

export class TcpProxy {
  readonly #target: { host: string; port: number };
  readonly #sockets = new Set<Socket>();
  #server: Server | undefined;
  port = 0;

  constructor(target: { host: string; port: number }) {
    this.#target = target;
  }

  /** Listens (on a free port the first time, on the same port after a cut). */
  async start(): Promise<this> {
    const server = createServer((client) => {
      const upstream = connect(this.#target.port, this.#target.host);
      for (const socket of [client, upstream]) {
        this.#sockets.add(socket);
        socket.on('close', () => this.#sockets.delete(socket));
        socket.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream).pipe(client);
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

  /** The outage: every connection dropped, new ones refused. */
  async cut(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    for (const socket of this.#sockets) socket.destroy();
    if (server !== undefined) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Listens again on the same port; a no-op while listening. */
  async restore(): Promise<this> {
    return this.#server === undefined ? this.start() : this;
  }
}
