/**
 * JSON-RPC 2.0 as the MCP endpoint speaks it over one HTTP request (docs/mcp.md): reading one
 * request message, and writing its result or its error.
 */
import type { RouteAnswer, RouteRequest } from '../http/app-routes.js';
import { forbiddenKeyOf, mayHoldForbiddenKey } from '../http/json.js';

/** JSON-RPC's error codes that the endpoint answers with. */
export const rpc = {
  parse: -32700,
  invalidRequest: -32600,
  noMethod: -32601,
  invalidParams: -32602,
} as const;

/** A request message, checked: a string method and a string or number id. */
export interface RpcRequest {
  readonly id: string | number;
  readonly method: string;
  readonly params: Record<string, unknown>;
}

/** A JSON-RPC failure: the message is the model's to read, so it says what was wrong. */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** A result already written as JSON text; `replayed`, a tool call's stored answer given again. */
export class RawResult {
  constructor(
    readonly json: string,
    readonly replayed = false,
  ) {}
}

/** A JSON answer of the endpoint's own (the metadata, a refusal). */
export const jsonAnswer = (status: number, body: unknown): RouteAnswer => ({
  status,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

/** A failure before any request could be read: 400, no id to answer to. */
export const rpcRefusal = (code: number, message: string, id: string | number | null = null): RouteAnswer =>
  jsonAnswer(400, { jsonrpc: '2.0', id, error: { code, message } });

/** Decodes whole bodies only (no stream), so one serves every request. */
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The request message of `request`'s body; or the answer already: 202 to a notification or a
 * client's own answer (nothing to say), 400 to what is not one JSON-RPC 2.0 request.
 */
export async function readRequest(request: RouteRequest): Promise<RpcRequest | RouteAnswer> {
  let text: string;
  let message: unknown;
  try {
    text = utf8.decode(await request.body());
    message = JSON.parse(text);
  } catch {
    return rpcRefusal(rpc.parse, 'Parse error');
  }
  // Batches left the protocol in 2025-06-18.
  if (typeof message !== 'object' || message === null || Array.isArray(message))
    return rpcRefusal(rpc.invalidRequest, 'A message is one JSON-RPC object');
  const { jsonrpc, id, method, params } = message as Record<string, unknown>;
  // A notification (a method, no id), or a client's answer to the server (an id, and a result or
  // an error): nothing to say back.
  if (jsonrpc === '2.0' && typeof method === 'string' && id === undefined) return { status: 202 };
  if (
    jsonrpc === '2.0' &&
    method === undefined &&
    id !== undefined &&
    ('result' in message || 'error' in message)
  )
    return { status: 202 };
  // An id written as a number too large for one (`1e400`) would be answered as `null`.
  const answerable = typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : null;
  if (jsonrpc !== '2.0' || typeof method !== 'string' || answerable === null)
    return rpcRefusal(
      rpc.invalidRequest,
      'Not a JSON-RPC 2.0 request: jsonrpc "2.0", a string method, a string or number id',
      answerable,
    );
  // Every method of the protocol takes its params by name: an object, or none.
  if (params !== undefined && (typeof params !== 'object' || params === null || Array.isArray(params)))
    return rpcAnswer(answerable, new RpcError(rpc.invalidParams, 'params, when sent, is an object'));
  const given = (params ?? {}) as Record<string, unknown>;
  // The rule of every JSON body, walked only when the text may spell a refused key at all. A
  // tool call's arguments are its procedure's input, checked where its REST body would be
  // (src/server/procedure-calls.ts): after the route's rate limit, before the context.
  if (mayHoldForbiddenKey(text)) {
    const { params: _params, ...envelope } = message as Record<string, unknown>;
    const { arguments: _arguments, ...rest } = given;
    const refused = forbiddenKeyOf({ ...envelope, params: method === 'tools/call' ? rest : given });
    if (refused !== undefined) return rpcRefusal(rpc.invalidRequest, refused.message, answerable);
  }
  return { id: answerable, method, params: given };
}

/** The answer to a request: its result (as a value, or written already), or its JSON-RPC error. */
export function rpcAnswer(id: string | number, outcome: unknown): RouteAnswer {
  if (outcome instanceof RpcError)
    return jsonAnswer(200, { jsonrpc: '2.0', id, error: { code: outcome.code, message: outcome.message } });
  const written = outcome instanceof RawResult ? outcome.json : JSON.stringify(outcome);
  // As over REST: the client learns that its Idempotency-Key replayed the first answer.
  const replayed = outcome instanceof RawResult && outcome.replayed;
  return {
    status: 200,
    headers: replayed
      ? { 'content-type': 'application/json', 'idempotency-replayed': 'true' }
      : { 'content-type': 'application/json' },
    body: `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${written}}`,
  };
}
