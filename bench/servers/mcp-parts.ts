/**
 * Routes that take an MCP tool call apart (bench/mcp-parts.ts): each does one more of a tool
 * call's parts than the one before, so that the CPU a part costs is the difference of two.
 */
import type { App } from 'proceedjs';
import { getPath } from './posts.js';

const postId = getPath.split('/').at(-1) as string;

export function addPartRoutes(app: App): void {
  const route = app.routes.find((each) => each.name === 'getPost');
  if (route === undefined) throw new Error('mcp-parts: the app has no getPost');
  const post = {
    id: postId,
    title: 'Post number 500',
    excerpt: 'What post 500 is about, in a sentence.',
  };
  const restBody = JSON.stringify(post);
  const resultOf = (text: string) =>
    `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":${JSON.stringify(text)}}],"structuredContent":${text}}}`;
  const toolBody = resultOf(restBody);
  const utf8 = new TextDecoder();
  // A GET answered with getPost's body as it is, through an app route: the REST read without its procedure.
  app.route('GET', '/parts/get/:id', () => ({
    status: 200,
    headers: { 'content-type': 'application/json; charset=utf-8' },
    body: restBody,
  }));
  // The tool call's POST, its body read and parsed, its result given as it is: the transport alone.
  app.route('POST', '/parts/read', async (request) => {
    JSON.parse(utf8.decode(await request.body()));
    return { status: 200, headers: { 'content-type': 'application/json' }, body: toolBody };
  });
  // The same, and the procedure called through `app.callProcedure`, its result written around its text.
  app.route('POST', '/parts/call', async (request) => {
    const message = JSON.parse(utf8.decode(await request.body())) as { params: { arguments: unknown } };
    const calling = {
      id: request.id,
      method: request.method,
      url: request.path,
      ip: request.ip,
      headers: request.headers,
    };
    const answered = await app.callProcedure(route, calling, message.params.arguments);
    return { status: 200, headers: { 'content-type': 'application/json' }, body: resultOf(answered.body) };
  });
}
