/**
 * A route of the app that is not a procedure (src/http/app-routes.ts) as a Fastify route: the
 * request read into the neutral one, the neutral answer written on the reply. Fastify's hooks
 * give it what every route of the app has: the request id, CORS, logs, observers, problems.
 */
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type AppRoute, type RouteAnswer, type RouteRequest, sentRouteAnswer } from '../http/app-routes.js';

const empty = new Uint8Array(0);

class FastifyRouteRequest implements RouteRequest {
  readonly method: string;
  readonly path: string;
  readonly params: Readonly<Record<string, string>>;
  readonly headers: Readonly<Record<string, string | undefined>>;
  readonly id: string;
  readonly #request: FastifyRequest;
  readonly #queryStart: number;
  #query: URLSearchParams | undefined;

  constructor(request: FastifyRequest) {
    this.#request = request;
    this.method = request.method;
    const { url } = request;
    this.#queryStart = url.indexOf('?');
    this.path = this.#queryStart === -1 ? url : url.slice(0, this.#queryStart);
    this.params = request.params as Record<string, string>;
    this.headers = joinedHeaders(request.headers);
    this.id = request.id;
  }

  get query(): URLSearchParams {
    const start = this.#queryStart;
    this.#query ??= new URLSearchParams(start === -1 ? '' : this.#request.url.slice(start + 1));
    return this.#query;
  }

  get ip(): string {
    return this.#request.ip;
  }

  body(): Promise<Uint8Array> {
    const { body } = this.#request;
    return Promise.resolve(body instanceof Uint8Array ? body : empty);
  }
}

/**
 * Node's headers with each repeated one joined, as a Fetch `Headers` gives them; most requests
 * repeat none (only `set-cookie` comes as a list), and are handed on as they are.
 */
function joinedHeaders(headers: FastifyRequest['headers']): Readonly<Record<string, string | undefined>> {
  for (const name in headers) {
    if (!Array.isArray(headers[name])) continue;
    const joined: Record<string, string | undefined> = {};
    for (const [each, value] of Object.entries(headers))
      joined[each] = Array.isArray(value) ? value.join(', ') : value;
    return joined;
  }
  return headers as Readonly<Record<string, string | undefined>>;
}

/**
 * Writes the answer on the reply, which holds what the app's hooks set already: CORS's headers
 * (its `Vary: Origin` first, its `Access-Control-*` the app's policy, which a handler's do not
 * replace), as `app.fetch` adds them.
 */
function write(reply: FastifyReply, given: RouteAnswer): unknown {
  const { status, headers, body } = sentRouteAnswer(given);
  reply.code(status);
  for (const [name, value] of Object.entries(headers)) {
    const before = name === 'vary' || name.startsWith('access-control-') ? reply.getHeader(name) : undefined;
    if (before === undefined || before === '') reply.header(name, value);
    else if (name === 'vary') reply.header(name, `${String(before)}, ${value}`);
  }
  if (typeof body === 'string') return body;
  if (body === null) return reply.send();
  if (body instanceof Uint8Array)
    return reply.send(Buffer.from(body.buffer, body.byteOffset, body.byteLength));
  return reply.send(Readable.fromWeb(body as WebReadableStream<Uint8Array>));
}

/** Registers the route; one that takes a body reads it as bytes, whatever its type, up to its limit. */
export function registerAppRoute(server: FastifyInstance, route: AppRoute, appBodyLimit: number): void {
  const handler = (request: FastifyRequest, reply: FastifyReply): unknown => {
    const answered = route.handler(new FastifyRouteRequest(request));
    return answered instanceof Promise
      ? answered.then((answer) => write(reply, answer))
      : write(reply, answered);
  };
  if (route.method === 'GET') {
    server.route({ method: 'GET', url: route.path, handler });
    return;
  }
  const bodyLimit = route.bodyLimit ?? appBodyLimit;
  void server.register(async (raw) => {
    raw.removeAllContentTypeParsers();
    raw.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit }, (_request, body, done) =>
      done(null, body),
    );
    raw.route({ method: route.method, url: route.path, bodyLimit, handler });
  });
}
