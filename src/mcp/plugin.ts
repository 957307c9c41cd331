/**
 * The app's procedures as tools for AI agents: a Model Context Protocol endpoint over Streamable
 * HTTP, stateless, served as a route of the app on every adapter (docs/mcp.md). Each tool call
 * runs its procedure as its REST route would for the same caller (`app.callProcedure`).
 */
import { type ProblemCode, ProceedError } from '../core/errors.js';
import { optionKeys, refuseUnknownOptions } from '../core/options.js';
import type { RouteRequest } from '../http/app-routes.js';
import { problemAnswer } from '../http/problems.js';
import type { App } from '../server/app.js';
import type { CallingRequest } from '../server/procedure-calls.js';
import { type Tool, toolsOf } from './tools.js';

/** The protocol versions this endpoint speaks, newest first (the newest is `@modelcontextprotocol/sdk`'s). */
export const protocolVersions = ['2025-11-25', '2025-06-18', '2025-03-26'] as const;

export interface McpPluginOptions {
  /** Where the endpoint answers. Default `/mcp`. */
  path?: string;
  /** Collections whose every procedure is a tool, beside the procedures marked `.mcp()`. */
  collections?: readonly string[];
  /**
   * Origins a browser may call the endpoint from, beside its own (the `Host` it is called at).
   * Any other `Origin` is refused (403): a page of another site.
   */
  allowedOrigins?: readonly string[];
  /**
   * The `Host` names the endpoint answers to (a port is ignored). Default: on an app listening on
   * a loopback interface (`app.listen`'s default), loopback names only (`localhost`, `127.0.0.1`,
   * `[::1]`), so that a site whose name resolves to 127.0.0.1 cannot reach it (DNS rebinding);
   * elsewhere any.
   */
  allowedHosts?: readonly string[];
  /**
   * The endpoint's public URL, named in its protected-resource metadata and in `WWW-Authenticate`.
   * Default: from the request's `Host` (and `X-Forwarded-Proto`) and `path`.
   */
  resource?: string;
  /** The OAuth authorization servers of the metadata (RFC 9728). Default: the endpoint's own origin. */
  authorizationServers?: readonly string[];
  /** The server's name and version in `initialize`. Default `proceed`, `1.0.0`. */
  name?: string;
  version?: string;
  /** Tools per page of `tools/list`. Default 100. */
  pageSize?: number;
}

const mcpKeys = optionKeys<McpPluginOptions>()(
  'path',
  'collections',
  'allowedOrigins',
  'allowedHosts',
  'resource',
  'authorizationServers',
  'name',
  'version',
  'pageSize',
);

/** JSON-RPC's error codes that this endpoint answers with. */
const rpc = { parse: -32700, invalidRequest: -32600, noMethod: -32601, invalidParams: -32602 } as const;

type Id = string | number | null;

interface RpcRequest {
  readonly id?: Id;
  readonly method?: unknown;
  readonly params?: unknown;
}

/** A JSON-RPC failure: the message is the model's to read, so it says what was wrong. */
class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** Decodes whole bodies only (no stream), so one serves every request. */
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** A result already written as JSON text. */
class RawResult {
  constructor(readonly json: string) {}
}

const json = (status: number, body: unknown) => ({
  status,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

/** The endpoint's public URL, for the metadata and `WWW-Authenticate`. */
function resourceOf(request: RouteRequest, path: string, configured: string | undefined): string {
  if (configured !== undefined) return configured;
  const forwarded = request.headers['x-forwarded-proto']?.split(',')[0]?.trim();
  return `${forwarded === 'https' ? 'https' : 'http'}://${request.headers.host ?? 'localhost'}${path}`;
}

/** The loopback names a local server answers to. */
const loopback: ReadonlySet<string> = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/** A `Host` value's name, without its port: `127.0.0.1:3030` → `127.0.0.1`, `[::1]:80` → `[::1]`. */
function hostName(host: string): string {
  const name = host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : (host.split(':')[0] ?? host);
  return name.toLowerCase();
}

/** Registers the MCP endpoint (docs/mcp.md). */
export async function mcpPlugin(app: App, options: McpPluginOptions = {}): Promise<void> {
  refuseUnknownOptions('mcpPlugin', options, mcpKeys);
  const path = options.path ?? '/mcp';
  const pageSize = options.pageSize ?? 100;
  const allowed = new Set(options.allowedOrigins ?? []);
  const metadataPath = `/.well-known/oauth-protected-resource${path === '/mcp' ? '' : path}`;
  let tools: Tool[] = [];
  let byName = new Map<string, Tool>();
  // Every procedure is mounted by the time the app is ready.
  app.onReady(() => {
    tools = toolsOf(app.routes, { collections: options.collections ?? [] });
    byName = new Map(tools.map((tool) => [tool.description.name, tool]));
  });

  let hosts: ReadonlySet<string> | undefined =
    options.allowedHosts === undefined ? undefined : new Set(options.allowedHosts.map(hostName));
  app.onListen(({ host }) => {
    if (options.allowedHosts === undefined && loopback.has(hostName(host))) hosts = loopback;
  });

  /**
   * Refuses a `Host` the endpoint does not answer to (DNS rebinding: a site whose name resolves
   * to this machine) and a browser on another origin (a page calling the agent's endpoint).
   */
  const refuseForeignOrigin = (request: RouteRequest) => {
    const host = request.headers.host;
    if (hosts !== undefined && (host === undefined || !hosts.has(hostName(host))))
      throw new ProceedError(
        'FORBIDDEN',
        `This MCP endpoint does not answer to the host ${host ?? '(none)'}`,
      );
    const origin = request.headers.origin;
    if (origin === undefined || allowed.has(origin)) return;
    let originHost: string | undefined;
    try {
      originHost = new URL(origin).host;
    } catch {
      originHost = undefined;
    }
    if (originHost === undefined || originHost !== host)
      throw new ProceedError('FORBIDDEN', `Origin ${origin} may not call this MCP endpoint`);
  };

  /** A 401 as the protocol asks: where to learn how to get a token (RFC 9728). */
  const unauthenticated = (error: ProceedError, request: RouteRequest): ProceedError => {
    const resource = resourceOf(request, path, options.resource);
    const metadata = `${new URL(resource).origin}${metadataPath}`;
    const challenge = error.headers?.['www-authenticate'];
    // The auth plugin's own challenge (`error="invalid_token"`) is kept, the metadata added to it.
    const header =
      challenge?.startsWith('Bearer ') === true
        ? `${challenge}, resource_metadata="${metadata}"`
        : `Bearer resource_metadata="${metadata}"`;
    return new ProceedError(error.code as ProblemCode, error.message, {
      headers: { ...error.headers, 'www-authenticate': header },
    });
  };

  /**
   * A tool's result as JSON text, made around the answer's own text rather than by parsing it
   * back: the procedure's serializer wrote it already (an object's text starts with `{`).
   */
  const callToolResult = async (tool: Tool, request: CallingRequest, args: unknown): Promise<RawResult> => {
    let text: string;
    let isError = false;
    try {
      text = (await app.callProcedure(tool.route, request, args)).body;
    } catch (error) {
      const problem = problemAnswer(error, { exposeErrors: false, log: app.log });
      // Without credentials (or with a bad token) the protocol answers over HTTP, not as a result.
      if (problem.status === 401) throw error;
      text = problem.body;
      isError = true;
    }
    const structured = text.startsWith('{') ? `,"structuredContent":${text}` : '';
    return new RawResult(
      `{"content":[{"type":"text","text":${JSON.stringify(text)}}]${structured}${isError ? ',"isError":true' : ''}}`,
    );
  };

  const answer = async (message: RpcRequest, request: RouteRequest): Promise<unknown> => {
    const calling: CallingRequest = {
      id: request.id,
      method: request.method,
      url: request.path,
      ip: request.ip,
      headers: request.headers,
    };
    const params = (message.params ?? {}) as Record<string, unknown>;
    switch (message.method) {
      case 'initialize': {
        const asked = params.protocolVersion;
        return {
          protocolVersion: protocolVersions.includes(asked as never) ? asked : protocolVersions[0],
          capabilities: { tools: { listChanged: false } },
          serverInfo: { name: options.name ?? 'proceed', version: options.version ?? '1.0.0' },
        };
      }
      case 'ping':
        return {};
      case 'tools/list': {
        const cursor = params.cursor;
        const start = cursor === undefined ? 0 : Number(cursor);
        if (!Number.isInteger(start) || start < 0 || typeof (cursor ?? '0') !== 'string')
          throw new RpcError(rpc.invalidParams, 'The cursor is not one this server gave');
        const callable = new Set(
          await app.callableBy(
            tools.map((tool) => tool.route),
            calling,
          ),
        );
        const listed = tools.filter((tool) => callable.has(tool.route));
        const page = listed.slice(start, start + pageSize);
        const next = start + pageSize < listed.length ? { nextCursor: String(start + pageSize) } : {};
        return { tools: page.map((tool) => tool.description), ...next };
      }
      case 'tools/call': {
        const name = params.name;
        const tool = typeof name === 'string' ? byName.get(name) : undefined;
        if (tool === undefined) throw new RpcError(rpc.invalidParams, `No tool is named ${String(name)}`);
        return callToolResult(tool, calling, params.arguments ?? {});
      }
      default:
        throw new RpcError(rpc.noMethod, `This server has no method ${String(message.method)}`);
    }
  };

  app.route('POST', path, async (request) => {
    refuseForeignOrigin(request);
    const version = request.headers['mcp-protocol-version'];
    if (version !== undefined && !protocolVersions.includes(version as never))
      return json(400, {
        jsonrpc: '2.0',
        id: null,
        error: { code: rpc.invalidRequest, message: `Unsupported MCP-Protocol-Version ${version}` },
      });
    let message: unknown;
    try {
      message = JSON.parse(utf8.decode(await request.body()));
    } catch {
      return json(400, { jsonrpc: '2.0', id: null, error: { code: rpc.parse, message: 'Parse error' } });
    }
    if (typeof message !== 'object' || message === null || Array.isArray(message))
      return json(400, {
        jsonrpc: '2.0',
        id: null,
        error: { code: rpc.invalidRequest, message: 'A message is one JSON-RPC object' },
      });
    const rpcMessage = message as RpcRequest & { jsonrpc?: unknown };
    // A notification, or a client's answer: taken, nothing to say.
    if (rpcMessage.jsonrpc === '2.0' && (rpcMessage.id === undefined || rpcMessage.method === undefined))
      return { status: 202 };
    const { id } = rpcMessage;
    if (
      rpcMessage.jsonrpc !== '2.0' ||
      typeof rpcMessage.method !== 'string' ||
      (typeof id !== 'string' && typeof id !== 'number')
    )
      return json(400, {
        jsonrpc: '2.0',
        id: typeof id === 'string' || typeof id === 'number' ? id : null,
        error: {
          code: rpc.invalidRequest,
          message: 'Not a JSON-RPC 2.0 request: jsonrpc "2.0", a string method, a string or number id',
        },
      });
    try {
      const result = await answer(rpcMessage, request);
      const written = result instanceof RawResult ? result.json : JSON.stringify(result);
      return {
        status: 200,
        headers: { 'content-type': 'application/json' },
        body: `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${written}}`,
      };
    } catch (error) {
      if (error instanceof RpcError)
        return json(200, {
          jsonrpc: '2.0',
          id: rpcMessage.id,
          error: { code: error.code, message: error.message },
        });
      if (error instanceof ProceedError && error.status === 401) throw unauthenticated(error, request);
      throw error;
    }
  });
  // Stateless: no stream of the server's own to open, no session to end.
  for (const method of ['GET', 'DELETE'] as const)
    app.route(method, path, () => {
      throw new ProceedError(
        'METHOD_NOT_ALLOWED',
        `This MCP endpoint takes POST only (stateless: no ${method === 'GET' ? 'stream' : 'session'})`,
        {
          headers: { allow: 'POST' },
        },
      );
    });
  app.route('GET', metadataPath, (request) => {
    const resource = resourceOf(request, path, options.resource);
    return json(200, {
      resource,
      authorization_servers: options.authorizationServers ?? [new URL(resource).origin],
      bearer_methods_supported: ['header'],
    });
  });
}
