/**
 * A TCP proxy, to make a real outage without touching what is behind it: in front of the
 * PostgreSQL server, `cut()` drops every connection and refuses new ones, `restore()` listens
 * again on the same port; in front of a blog instance, `target` may change and `drop()` cuts what
 * is open (a network that failed over).
 */
import { connect, createServer, type Server, type Socket } from 'node:net';

export class TcpProxy {
  /** Where new connections go: change it to send them elsewhere. */
  target: { host: string; port: number };
  readonly #sockets = new Set<Socket>();
  #server: Server | undefined;
  port = 0;

  constructor(target: { host: string; port: number }) {
    this.target = target;
  }

  /** Listens (on a free port the first time, on the same port after a cut). */
  async start(): Promise<this> {
    const server = createServer((client) => {
      const upstream = connect(this.target.port, this.target.host);
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
