/**
 * A request to the blog in this process, without a socket: `app.fetch` with a `Request`, read back
 * as tests read an answer (the blog serves on Node's own http module, where `app.inject` is not).
 */
import type { App } from 'proceedjs/node';

export interface InProcessAnswer {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
  // biome-ignore lint/suspicious/noExplicitAny: read as loosely as app.inject's json(), which the tests were written against
  json<T = any>(): T;
}

export async function inProcess<TCtx extends object>(
  app: App<TCtx>,
  request: { method: string; url: string; payload?: object; headers?: Record<string, string> },
): Promise<InProcessAnswer> {
  const headers = new Headers(request.headers);
  if (request.payload !== undefined) headers.set('content-type', 'application/json');
  const answer = await app.fetch(
    new Request(`http://127.0.0.1${request.url}`, {
      method: request.method,
      headers,
      body: request.payload === undefined ? null : JSON.stringify(request.payload),
    }),
    { ip: '127.0.0.1' },
  );
  const body = await answer.text();
  const names: Record<string, string> = {};
  answer.headers.forEach((value, name) => {
    names[name] = value;
  });
  return {
    statusCode: answer.status,
    headers: names,
    body,
    json: () => JSON.parse(body),
  };
}
