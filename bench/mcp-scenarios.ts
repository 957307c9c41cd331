/**
 * getPost and createPost as MCP tool calls against the same REST calls (docs/performance.md, "MCP
 * tools/call against the same REST call"): a contender whose name ends in `mcp` is sent the tool
 * call (`POST /mcp`, `tools/call`), any other the REST request. `npm run bench`'s mcp section and
 * `npm run bench:duel` (`tool-get`, `tool-create`) read the same two.
 */
import type { Scenario } from './compare.js';
import { createBody, getPath } from './servers/posts.js';

const toolCall = (name: string, args: unknown) =>
  JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } });
const accept = { accept: 'application/json, text/event-stream' };
const callsTools = (contender: string) => contender.endsWith('mcp');

/** The answer's JSON either way: a REST body, or a tool result's structuredContent (never an error). */
const normalize = (answer: string) => {
  const parsed = JSON.parse(answer.slice(answer.indexOf('\n') + 1)) as {
    jsonrpc?: string;
    result?: { structuredContent?: unknown; isError?: boolean };
  };
  if (parsed.jsonrpc === undefined) return JSON.stringify(parsed);
  if (parsed.result?.isError === true) return `a tool error: ${JSON.stringify(parsed.result)}`;
  return JSON.stringify(parsed.result?.structuredContent);
};

export const toolGet: Scenario = {
  name: 'getPost',
  method: 'GET',
  path: getPath,
  expectStatus: 200,
  normalize,
  vary: (contender) =>
    callsTools(contender)
      ? {
          method: 'POST',
          path: '/mcp',
          headers: accept,
          body: toolCall('getPost', { id: getPath.split('/').at(-1) }),
        }
      : {},
};

export const toolCreate: Scenario = {
  name: 'createPost (bearer JWT, 1 KB)',
  method: 'POST',
  path: '/api/posts',
  body: createBody,
  expectStatus: 201,
  normalize,
  vary: (contender, server) => {
    const authorization = `Bearer ${server.token}`;
    return callsTools(contender)
      ? {
          path: '/mcp',
          headers: { ...accept, authorization },
          body: toolCall('createPost', JSON.parse(createBody)),
        }
      : { headers: { authorization } };
  },
};
