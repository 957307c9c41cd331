/**
 * The request the pipeline of src/http/fetch.ts reads and the answer it gives, neither tied to a
 * transport (docs/architecture.md, "A request"): a Fetch `Request` is one such request, and a Node
 * request seen through the same few members (src/server/node-request.ts) is another. The answer
 * is what an adapter writes: a `Response` on a Fetch runtime (`responseOf`), Node's own response
 * on `node:http` (src/server/node-http.ts).
 */
import { sentStatus } from './handshake.js';
import type { SocketSession } from './sockets.js';

/** The headers of a request, read by name. */
export interface RequestHeaders {
  get(name: string): string | null;
  has(name: string): boolean;
  forEach(each: (value: string, name: string) => void): void;
}

/** What the pipeline reads of a request: the members of a Fetch `Request` it uses, no more. */
export interface PipelineRequest {
  readonly method: string;
  /** The whole URL: scheme, authority, path and query. */
  readonly url: string;
  readonly headers: RequestHeaders;
  /** The body as a stream; null when the request has none. */
  readonly body: ReadableStream<Uint8Array> | null;
  /** Aborted when the client leaves before its answer is sent. */
  readonly signal?: AbortSignal | undefined;
  /** The whole body, framed by its `Content-Length`. */
  arrayBuffer(): Promise<ArrayBuffer>;
  /** The same as bytes of its own, where the request reads them without an `ArrayBuffer` first. */
  bytes?(): Promise<Uint8Array>;
  /**
   * Completes a WebSocket handshake accepted by the app, where the adapter does so itself (Node's
   * `ws`): the answer that stands for the 101. A Fetch `Request` has none: its runtime does it.
   */
  readonly upgradeSocket?: ((upgrade: SocketUpgrade) => Response) | undefined;
  /**
   * Whether the server under the app serves `method` on `path` with a route of its own (one
   * added on `app.server`), so that 404, 405 and a preflight know of it.
   */
  readonly serverTakes?: ((method: string, path: string) => boolean) | undefined;
  /**
   * Whether the client left before its answer was made, where the adapter can tell (Node); else
   * the request's aborted `signal` tells it (Bun; Deno aborts it only once an answer is sent).
   */
  readonly clientLeft?: boolean;
  /**
   * Whether the client waits for a `100 Continue` before it sends its body, and none has been
   * sent: on Node, where the first read of the body sends it, so that a request refused before
   * its body is read (401, 403, a 413 by its length) is answered without inviting the body.
   * Such a body is not read on: the client keeps it, and the connection closes after the answer.
   */
  readonly awaitsContinue?: boolean;
  /**
   * The id the server under the app gave the request already (Fastify, whose hooks logged with
   * it), which the answer and its log line keep: one id per request.
   */
  readonly givenId?: string | undefined;
}

/** A WebSocket handshake the app accepted, for the runtime to complete (docs/sockets.md). */
export interface SocketUpgrade {
  /** A Fetch `Request` where the runtime's own server received it (Bun, Deno, Workers). */
  readonly request: PipelineRequest;
  /** What the runtime passed beside the request to app.fetch (Bun's server). */
  readonly argument: unknown;
  readonly session: SocketSession;
  /** The most one frame may carry: the runtime closes with 1009 past it, where it can tell. */
  readonly frameLimit: number;
  /** ms between pings, for a runtime that keeps sockets alive itself (Deno). */
  readonly pingInterval: number;
  /** The app's headers for the `101`: its request id, the handler's cookies. */
  readonly headers: readonly (readonly [string, string])[];
}

/** What an answer sends after its headers. */
export type SentBody = string | Uint8Array | ReadableStream<Uint8Array> | Blob | null;

/** An answer, before any adapter writes it. */
export class SentAnswer {
  status: number;
  /** By lower-case name, one value each. */
  readonly headers: Record<string, string>;
  /** One `Set-Cookie` line each. */
  readonly cookies: readonly string[];
  body: SentBody;
  /**
   * A WebSocket handshake the runtime completes itself (Bun, Deno, Workers): its own answer,
   * handed back as it is.
   */
  readonly handshake: Response | undefined;
  /**
   * Whether the body is a file's bytes read as they are sent (from disk, a Blob or a stream, not
   * from memory): on Node such a file holds a descriptor of its own until the answer ends, which
   * the connection limit counts (src/server/lifecycle.ts).
   */
  readsFile = false;

  constructor(
    status: number,
    headers: Record<string, string>,
    cookies: readonly string[],
    body: SentBody,
    handshake?: Response,
  ) {
    this.status = status;
    this.headers = headers;
    this.cookies = cookies;
    this.body = body;
    this.handshake = handshake;
  }

  /** The status on the wire: 101 for a handshake, whatever the runtime's answer says. */
  get sentStatus(): number {
    return this.handshake === undefined ? this.status : sentStatus(this.handshake);
  }
}

/** The answer as a Fetch `Response`. */
export function responseOf(sent: SentAnswer): Response {
  if (sent.handshake !== undefined) return sent.handshake;
  const { headers, cookies } = sent;
  return new Response(sent.body as BodyInit | null, {
    status: sent.status,
    headers:
      cookies.length === 0
        ? headers
        : [...Object.entries(headers), ...cookies.map((line): [string, string] => ['set-cookie', line])],
  });
}
