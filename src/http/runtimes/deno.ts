/** Deno (docs/deployment.md, "Fetch runtimes"): `app.listen` serves app.fetch with `Deno.serve`. */
import {
  type FetchHandler,
  followStandardSocket,
  type NativeServe,
  type Runtime,
  type SocketUpgrade,
  standardPeer,
  withNodeCode,
} from './common.js';

interface DenoServer {
  shutdown(): Promise<void>;
  readonly finished: Promise<void>;
}

interface DenoGlobal {
  upgradeWebSocket(
    request: Request,
    options: { idleTimeout: number },
  ): { socket: WebSocket; response: Response };
  serve(
    options: {
      port: number;
      hostname: string;
      signal: AbortSignal;
      onListen: (address: { port: number }) => void;
      onError: (error: unknown) => Response;
    },
    handler: FetchHandler,
  ): DenoServer;
}

/**
 * Deno's socket. Deno pings it itself (`idleTimeout`: a ping after that many seconds of quiet,
 * closed when no pong follows), so the session sends none.
 */
function upgradeSocket({ request, session, pingInterval, headers }: SocketUpgrade): Response {
  const { Deno } = globalThis as unknown as { Deno: DenoGlobal };
  const { socket, response } = Deno.upgradeWebSocket(request as Request, {
    idleTimeout: Math.ceil(pingInterval / 1000),
  });
  socket.addEventListener('open', () => session.open(standardPeer(socket, undefined)), { once: true });
  followStandardSocket(socket, session);
  for (const [name, value] of headers) response.headers.append(name, value);
  return response;
}

/** Deno's handler info, passed beside each request. */
interface DenoArgument {
  remoteAddr?: { hostname?: unknown; port?: unknown };
}

const serve: NativeServe = async ({ port, host, fetch, failed }) => {
  const { Deno } = globalThis as unknown as { Deno: DenoGlobal };
  const abort = new AbortController();
  // The answers being made, for a graceful stop to wait on before Deno's shutdown() (below).
  const running = new Set<Promise<Response>>();
  const handler: FetchHandler = (request, info) => {
    const answer = fetch(request, info);
    running.add(answer);
    const done = () => running.delete(answer);
    answer.then(done, done);
    return answer;
  };
  let server: DenoServer | undefined;
  const bound = await new Promise<number>((resolve, reject) => {
    try {
      server = Deno.serve(
        {
          port,
          hostname: host,
          signal: abort.signal,
          onListen: (address) => resolve(address.port),
          onError: failed,
        },
        handler,
      );
    } catch (error) {
      reject(withNodeCode(error));
    }
  });
  return {
    port: bound,
    stop: async (force) => {
      if (force) abort.abort();
      else {
        // Deno's shutdown() makes the body of every request in flight unreadable at once
        // (BadResource, denoland/deno#36809, Deno 2.9): one whose body is still arriving would
        // fail with a 400. So the requests in flight are answered first, the port still open;
        // a request that comes meanwhile gets the app's 503 (it is closing) without its body
        // being read. shutdown() then stops accepting and waits for the answers being sent.
        await Promise.allSettled(running);
        await server?.shutdown();
      }
      await server?.finished;
    },
  };
};

export const deno: Runtime = {
  name: 'Deno',
  peerAddress(_request, argument) {
    const hostname = (argument as DenoArgument | undefined)?.remoteAddr?.hostname;
    return typeof hostname === 'string' ? hostname : undefined;
  },
  peerPort(_request, argument) {
    const port = (argument as DenoArgument | undefined)?.remoteAddr?.port;
    return typeof port === 'number' ? port : undefined;
  },
  spoolsToDisk: true,
  diskFile: async (path, size, name, type) => new DenoDiskFile(path, 0, size, name, type),
  compresses: true,
  namesConnections: true,
  readsRefusedBodies: false,
  streamsKeepLength: true,
  listens: true,
  serve,
  hasStandardOutput: true,
  importsTypeScript: true,
  xxHash64: undefined,
  upgradeSocket,
  socketHandlers: undefined,
  sharesRequestObjects: true,
};

/**
 * Deno's `openAsBlob` reads the whole file into memory; this `File` reads from disk each time
 * it is asked for its bytes, and hands out slices that do the same.
 */
class DenoDiskFile extends File {
  readonly #path: string;
  readonly #start: number;
  readonly #end: number;

  constructor(path: string, start: number, end: number, name: string, type: string) {
    super([], name, { type });
    this.#path = path;
    this.#start = start;
    this.#end = end;
  }

  override get size(): number {
    return this.#end - this.#start;
  }

  override stream(): ReadableStream<Uint8Array<ArrayBuffer>> {
    const path = this.#path;
    const start = this.#start;
    const end = this.#end;
    let position = start;
    let handle: import('node:fs/promises').FileHandle | undefined;
    return new ReadableStream<Uint8Array<ArrayBuffer>>({
      async pull(controller) {
        if (position >= end) {
          await handle?.close();
          controller.close();
          return;
        }
        const { open } = await import('node:fs/promises');
        handle ??= await open(path, 'r');
        const chunk = new Uint8Array(Math.min(64 * 1024, end - position));
        const { bytesRead } = await handle.read(chunk, 0, chunk.byteLength, position);
        if (bytesRead === 0) {
          await handle.close();
          controller.error(new Error('The uploaded file is shorter than it was'));
          return;
        }
        position += bytesRead;
        controller.enqueue(chunk.subarray(0, bytesRead));
      },
      async cancel() {
        await handle?.close();
      },
    });
  }

  override async bytes(): Promise<Uint8Array<ArrayBuffer>> {
    const whole = new Uint8Array(this.size);
    let offset = 0;
    for await (const chunk of this.stream() as unknown as AsyncIterable<Uint8Array>) {
      whole.set(chunk, offset);
      offset += chunk.byteLength;
    }
    return whole;
  }

  override async arrayBuffer(): Promise<ArrayBuffer> {
    return (await this.bytes()).buffer;
  }

  override async text(): Promise<string> {
    return new TextDecoder().decode(await this.bytes());
  }

  override slice(start = 0, end = this.size, type = ''): Blob {
    const clamp = (at: number) => Math.max(0, Math.min(this.size, at < 0 ? this.size + at : at));
    const from = clamp(start);
    const to = Math.max(from, clamp(end));
    return new DenoDiskFile(this.#path, this.#start + from, this.#start + to, this.name, type);
  }
}
