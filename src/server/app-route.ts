/**
 * A route of the app that is not a procedure (src/http/app-routes.ts) as a Fastify route: the
 * request read into the neutral one, the neutral answer written on the reply. Fastify's hooks
 * give it what every route of the app has: the request id, CORS, logs, observers, problems.
 */
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  type AppRoute,
  type RouteAnswer,
  type RouteRequest,
  routeAnswerHeaders,
} from '../http/app-routes.js';

const empty = new Uint8Array(0);

class FastifyRouteRequest implements RouteRequest {
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  readonly params: Readonly<Record<string, string>>;
  readonly headers: Readonly<Record<string, string | undefined>>;
  readonly id: string;
  readonly #request: FastifyRequest;

  constructor(request: FastifyRequest) {
    this.#request = request;
    this.method = request.method;
    const { url } = request;
    const query = url.indexOf('?');
    this.path = query === -1 ? url : url.slice(0, query);
    this.query = new URLSearchParams(query === -1 ? '' : url.slice(query + 1));
    this.params = request.params as Record<string, string>;
    const headers: Record<string, string | undefined> = {};
    for (const [name, value] of Object.entries(request.headers))
      headers[name] = Array.isArray(value) ? value.join(', ') : value;
    this.headers = headers;
    this.id = request.id;
  }

  get ip(): string {
    return this.#request.ip;
  }

  body(): Promise<Uint8Array> {
    const { body } = this.#request;
    return Promise.resolve(body instanceof Uint8Array ? body : empty);
  }
}

function write(reply: FastifyReply, answer: RouteAnswer): unknown {
  reply.code(answer.status ?? 200).headers(routeAnswerHeaders(answer));
  const { body } = answer;
  if (typeof body === 'string') return body;
  if (body === undefined || body === null) return reply.send();
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
