/**
 * A request of Node's http server as the pipeline reads it (src/http/sent.ts): the few members of
 * a Fetch `Request` it uses, read from the `IncomingMessage` as they are asked for. Nothing is
 * copied or converted up front: the headers are Node's own object, the body a stream only when a
 * route reads it as one, the abort signal made only for a route that listens for it.
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { completedHandshake } from '../http/handshake.js';
import type { SocketUpgrade } from '../http/runtimes/common.js';
import type { PipelineRequest, RequestHeaders } from '../http/sent.js';
import { isAcceptedHost } from '../http/url.js';
import type { Lifecycle } from './lifecycle.js';
import { isHeldUpgrade, openSocket } from './sockets.js';

/**
 * The headers of which Node keeps the first line and drops the others, where a Fetch runtime joins
 * them as it joins any repeated header (`Content-Length` and `Host` are not here: a second line of
 * either is refused before any route).
 */
const firstLineOnly = new Set([
  'age',
  'authorization',
  'content-type',
  'etag',
  'expires',
  'from',
  'if-modified-since',
  'if-unmodified-since',
  'last-modified',
  'location',
  'max-forwards',
  'proxy-authorization',
  'referer',
  'retry-after',
  'server',
  'user-agent',
]);

/**
 * Of the headers Node keeps one line of, those the request repeats, each with its lines joined
 * with ", "; null when it repeats none (as many lines as names: most requests, told at once).
 */
function repeatedLines(
  lines: readonly string[],
  headers: IncomingHttpHeaders,
): Record<string, string> | null {
  if (lines.length === Object.keys(headers).length * 2) return null;
  let joined: Record<string, string> | null = null;
  const values = new Map<string, string>();
  for (let index = 0; index < lines.length; index += 2) {
    const name = (lines[index] as string).toLowerCase();
    if (!firstLineOnly.has(name)) continue;
    const value = lines[index + 1] as string;
    const before = values.get(name);
    if (before === undefined) values.set(name, value);
    else {
      joined ??= {};
      joined[name] = `${joined[name] ?? before}, ${value}`;
    }
  }
  return joined;
}

/**
 * Node's headers by name, as a Fetch `Headers` gives them on every other runtime: a repeated one
 * joined with ", " (Node joins `Cookie` with "; "), those Node keeps one line of included, so that
 * two `Authorization` or `Content-Type` lines are read alike everywhere (docs/routes.md).
 */
class NodeHeaders implements RequestHeaders {
  readonly #raw: IncomingHttpHeaders;
  readonly #lines: readonly string[];
  #repeated: Record<string, string> | null | undefined;

  constructor(raw: IncomingHttpHeaders, lines: readonly string[]) {
    this.#raw = raw;
    this.#lines = lines;
  }

  get #joined(): Record<string, string> | null {
    if (this.#repeated === undefined) this.#repeated = repeatedLines(this.#lines, this.#raw);
    return this.#repeated;
  }

  get(name: string): string | null {
    const value = this.#raw[name];
    if (value === undefined) return null;
    if (typeof value !== 'string') return value.join(', ');
    // Node joined every other repeated header itself: only these need the lines read again.
    return firstLineOnly.has(name) ? (this.#joined?.[name] ?? value) : value;
  }

  has(name: string): boolean {
    return this.#raw[name] !== undefined;
  }

  forEach(each: (value: string, name: string) => void): void {
    const raw = this.#raw;
    const joined = this.#joined;
    for (const name in raw) {
      const value = raw[name];
      if (value !== undefined)
        each(typeof value === 'string' ? (joined?.[name] ?? value) : value.join(', '), name);
    }
  }
}

/**
 * The origin a request names with its `Host` header, or the server's own address where that is
 * missing or not an authority a URL can hold (`1.2.3.4.5`, `a:99999`, `a b`), so that no URL built
 * from it fails later. The last well-formed host seen is remembered: a server's clients name one or two.
 */
let lastHost: string | undefined;
let lastOrigin = '';
function originOf(host: string | undefined, ownHost: string): string {
  if (host === undefined) return `http://${ownHost}`;
  if (host === lastHost) return lastOrigin;
  const named = `http://${host}`;
  if (!isAcceptedHost(host)) return `http://${ownHost}`;
  lastHost = host;
  lastOrigin = named;
  return named;
}

/**
 * Requests whose client waits for a `100 Continue` not sent yet: Node's `checkContinue` listener
 * (src/server/node-http.ts) puts them here instead of answering 100 at once; the first read of
 * the body sends it.
 */
export const waitingForContinue = new WeakSet<IncomingMessage>();

/** Invites the body of a request whose client waits for a `100 Continue`, once. */
function sendContinue(incoming: IncomingMessage, response: ServerResponse): void {
  if (!waitingForContinue.delete(incoming) || response.headersSent || response.destroyed) return;
  response.writeContinue();
}

export class NodeRequest implements PipelineRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: NodeHeaders;
  readonly upgradeSocket: ((upgrade: SocketUpgrade) => Response) | undefined;
  readonly serverTakes: ((method: string, path: string) => boolean) | undefined;
  readonly givenId: string | undefined;
  readonly #incoming: IncomingMessage;
  readonly #response: ServerResponse;
  #body: ReadableStream<Uint8Array> | null | undefined;
  #signal: AbortController | undefined;

  constructor(
    incoming: IncomingMessage,
    response: ServerResponse,
    ownHost: string,
    lifecycle: Lifecycle,
    serverTakes?: (method: string, path: string) => boolean,
    givenId?: string,
  ) {
    this.#incoming = incoming;
    this.serverTakes = serverTakes;
    this.givenId = givenId;
    this.#response = response;
    this.method = incoming.method ?? 'GET';
    const raw = incoming.headers;
    this.headers = new NodeHeaders(raw, incoming.rawHeaders);
    const origin = originOf(raw.host, ownHost);
    const target = incoming.url ?? '/';
    // The origin form (`/path?query`) is what clients send; of the absolute form the path is
    // taken, and anything else (`*`) matches no route.
    this.url =
      target.charCodeAt(0) === 47 ? `${origin}${target}` : `${origin}/${absolutePath(target) ?? '*'}`;
    this.upgradeSocket = isHeldUpgrade(incoming)
      ? (upgrade) => {
          openSocket(incoming, upgrade.session, upgrade.frameLimit, answerOf(upgrade.headers), (connection) =>
            lifecycle.upgraded(connection),
          );
          return completedHandshake();
        }
      : undefined;
  }

  get body(): ReadableStream<Uint8Array> | null {
    if (this.#body === undefined) {
      const raw = this.#incoming.headers;
      const length = raw['content-length'];
      const sends =
        raw['transfer-encoding'] !== undefined || (length !== undefined && length !== '' && length !== '0');
      this.#body = sends ? streamOf(this.#incoming, this.#response) : null;
    }
    return this.#body;
  }

  get awaitsContinue(): boolean {
    return waitingForContinue.has(this.#incoming);
  }

  get clientLeft(): boolean {
    const response = this.#response;
    return response.closed && !response.writableFinished;
  }

  get signal(): AbortSignal {
    if (this.#signal === undefined) {
      const controller = new AbortController();
      this.#signal = controller;
      const response = this.#response;
      if (response.closed && !response.writableFinished) controller.abort();
      else
        response.once('close', () => {
          if (!response.writableFinished) controller.abort();
        });
    }
    return this.#signal.signal;
  }

  /** The whole body, read from Node's stream without a web stream in between. */
  arrayBuffer(): Promise<ArrayBuffer> {
    return this.bytes().then((bytes) => bytes.buffer as ArrayBuffer);
  }

  /** The whole body in memory of its own (a Buffer of Node's may share its memory with others). */
  bytes(): Promise<Uint8Array> {
    const body = this.#body;
    if (body !== undefined && body !== null)
      return new Response(body).arrayBuffer().then((buffer) => new Uint8Array(buffer));
    const incoming = this.#incoming;
    sendContinue(incoming, this.#response);
    // Destroyed before the read began (its client left while a step waited): no event will come.
    if (incoming.destroyed) return Promise.reject(new Error('The client closed the request'));
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      incoming.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        size += chunk.byteLength;
      });
      incoming.on('error', reject);
      incoming.on('close', () => {
        if (!incoming.complete) reject(new Error('The client closed the request'));
      });
      incoming.on('end', () => {
        const bytes = new Uint8Array(size);
        let offset = 0;
        for (const chunk of chunks) {
          bytes.set(chunk, offset);
          offset += chunk.byteLength;
        }
        resolve(bytes);
      });
    });
  }
}

/**
 * Node's request body as a web stream, read as the stream is: Node's stream is paused while a
 * chunk waits unread. Cancelled before its end, it leaves the rest unread, and the connection
 * closes once the answer is sent (src/http/lingering.ts bounds what is read on before that). Node 20's `Readable.toWeb` throws from its data listener when a chunk
 * arrives after a cancel.
 */
function streamOf(incoming: IncomingMessage, response: ServerResponse): ReadableStream<Uint8Array> {
  let settled = false;
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        if (incoming.destroyed) {
          settled = true;
          controller.error(new Error('The client closed the request'));
          return;
        }
        incoming.on('data', (chunk: Buffer) => {
          if (settled) return;
          controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
          if ((controller.desiredSize ?? 0) <= 0) incoming.pause();
        });
        incoming.once('end', () => {
          if (settled) return;
          settled = true;
          controller.close();
        });
        const failed = (error: Error) => {
          if (settled) return;
          settled = true;
          controller.error(error);
        };
        incoming.once('error', failed);
        incoming.once('close', () => {
          if (!incoming.complete) failed(new Error('The client closed the request'));
        });
        incoming.pause();
      },
      pull() {
        sendContinue(incoming, response);
        incoming.resume();
      },
      cancel() {
        settled = true;
        incoming.pause();
        // The rest of the body is not read: the connection cannot carry another request. Closed
        // after the answer, or at once if it was sent already (a refused body read on to its bound).
        if (incoming.complete) return;
        response.shouldKeepAlive = false;
        if (response.writableFinished) incoming.socket?.destroy();
      },
    },
    // A client waiting for its 100 Continue gets it at the first read, not at the stream's own
    // pull to fill a queue of one: a refusal before any read must not invite the body.
    { highWaterMark: waitingForContinue.has(incoming) ? 0 : 1 },
  );
}

/** The path and query of an absolute-form target (`http://host/path`), without its leading '/'. */
function absolutePath(target: string): string | undefined {
  try {
    const url = new URL(target);
    return `${url.pathname}${url.search}`.slice(1);
  } catch {
    return undefined;
  }
}

/** The 101's lines as the `ws` handshake takes them: headers by name, and the cookies apart. */
function answerOf(lines: SocketUpgrade['headers']): { headers: Record<string, string>; cookies: string[] } {
  const headers: Record<string, string> = {};
  const cookies: string[] = [];
  for (const [name, value] of lines)
    if (name === 'set-cookie') cookies.push(value);
    else headers[name] = value;
  return { headers, cookies };
}
