/**
 * The app's procedures as tools for AI agents: a Model Context Protocol endpoint over Streamable
 * HTTP, stateless, served as a route of the app on every adapter (docs/mcp.md). Each tool call
 * runs its procedure as its REST route would for the same caller (`app.callProcedure`).
 */
import { ProceedConfigError, ProceedError } from '../core/errors.js';
import { optionKeys, refuseUnknownOptions } from '../core/options.js';
import type { RouteRequest } from '../http/app-routes.js';
import { jsonBodyRefusal } from '../http/fetch-body.js';
import type { OperationTrace, TracedOperation } from '../http/tracing.js';
import type { App } from '../server/app.js';
import type { CallingRequest } from '../server/procedure-calls.js';
import { Exposure } from './exposure.js';
import {
  jsonAnswer,
  RawResult,
  RpcError,
  type RpcRequest,
  readRequest,
  rpc,
  rpcAnswer,
  rpcRefusal,
} from './json-rpc.js';
import { type Tool, toolsOf } from './tools.js';

/** The protocol versions this endpoint speaks, newest first (the newest is `@modelcontextprotocol/sdk`'s). */
export const protocolVersions = ['2025-11-25', '2025-06-18', '2025-03-26'] as const;

export interface McpPluginOptions {
  /** Where the endpoint answers. Default `/mcp`. */
  path?: string;
  /** Collections whose every procedure is a tool, beside the procedures marked `.mcp()`. */
  collections?: readonly string[];
  /**
   * Reads only (GET procedures): the writes of `collections` are no tools, and a write marked
   * `.mcp()` is refused at start-up. Default false.
   */
  readOnly?: boolean;
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
  'readOnly',
  'allowedOrigins',
  'allowedHosts',
  'resource',
  'authorizationServers',
  'name',
  'version',
  'pageSize',
);

/** The methods this endpoint answers; every other is refused, and traced as `_OTHER`. */
const answeredMethods = new Set(['initialize', 'ping', 'tools/list', 'tools/call']);

/** The methods of the protocol the endpoint answers: `initialize`, `ping`, and the tools'. */
class McpMethods {
  readonly #app: App;
  readonly #options: McpPluginOptions;
  #tools: Tool[] = [];
  #byName = new Map<string, Tool>();

  constructor(app: App, options: McpPluginOptions) {
    this.#app = app;
    this.#options = options;
  }

  /** Once every procedure is mounted: the app's tools. */
  load(): void {
    this.#tools = toolsOf(this.#app.routes, {
      collections: this.#options.collections ?? [],
      readOnly: this.#options.readOnly === true,
    });
    this.#byName = new Map(this.#tools.map((tool) => [tool.description.name, tool]));
  }

  /** How a message is traced: named as the conventions for MCP name it (docs/observability.md). */
  operationOf({ id, method, params }: RpcRequest, version: string | undefined): TracedOperation {
    // A method this endpoint does not answer is `_OTHER`, as the HTTP conventions name an unknown
    // method: a client's made-up names would each make a span name of their own, of any length.
    const named = answeredMethods.has(method) ? method : '_OTHER';
    const attributes: Record<string, string> = {
      'mcp.method.name': named,
      'jsonrpc.request.id': String(id),
    };
    if (version !== undefined) attributes['mcp.protocol.version'] = version;
    const tool = method === 'tools/call' && typeof params.name === 'string' ? params.name : undefined;
    if (tool === undefined || !this.#byName.has(tool)) return { name: named, attributes };
    attributes['gen_ai.tool.name'] = tool;
    attributes['gen_ai.operation.name'] = 'execute_tool';
    return { name: `${method} ${tool}`, attributes };
  }

  async answer(
    { method, params }: RpcRequest,
    request: RouteRequest,
    trace: OperationTrace,
  ): Promise<unknown> {
    const calling = callingOf(request, trace.steps);
    switch (method) {
      case 'initialize': {
        await this.checkCredentials(calling);
        const asked = params.protocolVersion;
        return {
          protocolVersion: protocolVersions.includes(asked as never) ? asked : protocolVersions[0],
          capabilities: { tools: { listChanged: false } },
          serverInfo: { name: this.#options.name ?? 'proceed', version: this.#options.version ?? '1.0.0' },
        };
      }
      case 'ping':
        await this.checkCredentials(calling);
        return {};
      case 'tools/list':
        return this.#list(params.cursor, calling);
      case 'tools/call': {
        const { name } = params;
        const tool = typeof name === 'string' ? this.#byName.get(name) : undefined;
        if (tool === undefined) {
          await this.checkCredentials(calling);
          throw typeof name === 'string'
            ? new RpcError(rpc.invalidParams, `No tool is named ${name}`)
            : new RpcError(rpc.invalidParams, "tools/call takes params.name, the tool's name");
        }
        let conditioned: CallingRequest;
        try {
          conditioned = withConditions(calling, params._meta);
        } catch (error) {
          // A bad token is a 401 whatever else the message holds.
          await this.checkCredentials(calling);
          throw error;
        }
        return this.#call(tool, conditioned, params.arguments ?? {}, trace);
      }
      default:
        await this.checkCredentials(calling);
        throw new RpcError(rpc.noMethod, `This server has no method ${method}`);
    }
  }

  /**
   * Checks the credentials a message carries where nothing else will (a list and a call build the
   * caller's context): a bad, expired or revoked token is a 401 however little the message asks,
   * as on every route and as the protocol's authorization asks.
   */
  async checkCredentials(calling: CallingRequest): Promise<void> {
    if (calling.headers.authorization !== undefined) await this.#app.callableBy([], calling);
  }

  /** A page of the tools whose guards let the caller through. */
  async #list(cursor: unknown, calling: CallingRequest): Promise<object> {
    // Only what this server gives as nextCursor: a page's start, written in decimal digits.
    const pageSize = this.#options.pageSize ?? 100;
    const start =
      cursor === undefined
        ? 0
        : typeof cursor === 'string' && /^(?:0|[1-9]\d{0,8})$/.test(cursor)
          ? Number(cursor)
          : -1;
    if (start < 0 || start % pageSize !== 0)
      throw new RpcError(rpc.invalidParams, 'The cursor is not one this server gave');
    const routes = this.#tools.map((tool) => tool.route);
    const callable = new Set(await this.#app.callableBy(routes, calling));
    const listed = this.#tools.filter((tool) => callable.has(tool.route));
    // A cursor past the end of this caller's list was never given to it.
    if (start > 0 && start >= listed.length)
      throw new RpcError(rpc.invalidParams, 'The cursor is not one this server gave');
    const page = listed.slice(start, start + pageSize);
    const next = start + pageSize < listed.length ? { nextCursor: String(start + pageSize) } : {};
    return { tools: page.map((tool) => tool.description), ...next };
  }

  /**
   * A tool's result as JSON text, made around the answer's own text rather than by parsing it
   * back: the procedure's serializer wrote it already (an object's text starts with `{`). A
   * problem is the text alone: `structuredContent` must match the tool's `outputSchema`, and
   * clients check it even on an error (docs/mcp.md).
   */
  async #call(tool: Tool, calling: CallingRequest, args: unknown, trace: OperationTrace): Promise<RawResult> {
    let text: string;
    let isError = false;
    let replayed = false;
    let tag: string | undefined;
    try {
      const answered = await this.#app.callProcedure(tool.route, calling, args);
      text = answered.body;
      replayed = answered.replayed === true;
      tag = answered.tag;
    } catch (error) {
      const problem = this.#app.problemOf(error, calling.id);
      // Without credentials (or with a bad token) the protocol answers over HTTP, not as a result.
      if (problem.status === 401) throw error;
      trace.failed('tool_error', error);
      // The request's own line says 200: this one says which tool answered what.
      this.#app.log.info(
        { reqId: calling.id, tool: tool.description.name, status: problem.status, code: problem.code },
        'MCP tool call answered with a problem',
      );
      text = problem.body;
      isError = true;
    }
    const content = `{"content":[{"type":"text","text":${JSON.stringify(text)}}]`;
    if (isError) return new RawResult(`${content},"isError":true}`);
    // The record's version, as its REST answer's ETag, for the If-Match of a later write.
    const meta = tag === undefined ? '' : `,"_meta":{"${metaKeys.etag}":${JSON.stringify(tag)}}`;
    return new RawResult(
      text.startsWith('{') ? `${content},"structuredContent":${text}${meta}}` : `${content}${meta}}`,
      replayed,
    );
  }
}

/** A value a request header could carry: printable ASCII and spaces. */
const headerText = /^[\x20-\x7e]{1,1024}$/;

/** What a tool call's `_meta` carries of HTTP's conditions, and what its result's gives back. */
export const metaKeys = {
  etag: 'proceedjs/etag',
  ifMatch: 'proceedjs/if-match',
  idempotencyKey: 'proceedjs/idempotency-key',
} as const;

/**
 * The request a call runs for, with the `If-Match` and `Idempotency-Key` its `_meta` names in place
 * of the carrying request's: a client sends one request per call, but the SDK's `callTool` sets no
 * header per call, and a key set on its transport would be every call's (docs/mcp.md).
 */
function withConditions(calling: CallingRequest, meta: unknown): CallingRequest {
  if (meta === undefined || meta === null) return calling;
  if (typeof meta !== 'object' || Array.isArray(meta))
    throw new RpcError(rpc.invalidParams, 'params._meta is an object');
  const given = meta as Record<string, unknown>;
  const ifMatch = given[metaKeys.ifMatch];
  const key = given[metaKeys.idempotencyKey];
  if (ifMatch === undefined && key === undefined) return calling;
  // What a header could carry: an app that logs or forwards ctx.request.headers gets no line break.
  for (const [name, value] of [
    [metaKeys.ifMatch, ifMatch],
    [metaKeys.idempotencyKey, key],
  ] as const)
    if (value !== undefined && (typeof value !== 'string' || !headerText.test(value)))
      throw new RpcError(
        rpc.invalidParams,
        `params._meta["${name}"] is text of 1 to 1024 printable ASCII characters`,
      );
  const headers = { ...calling.headers };
  if (typeof ifMatch === 'string') headers['if-match'] = ifMatch;
  if (typeof key === 'string') headers['idempotency-key'] = key;
  return { ...calling, headers };
}

/** The request a tool call (or a check of its credentials) is made for: the one that carried it. */
function callingOf(request: RouteRequest, steps?: CallingRequest['steps']): CallingRequest {
  const { id, method, path, ip, headers } = request;
  return { id, method, url: path, ip, headers, steps };
}

/**
 * An origin as a browser's `Origin` names it: a scheme, `://` and a host with its port, nothing
 * after. Any scheme: an extension's (`chrome-extension://…`) or an editor's webview calls an MCP
 * endpoint as often as a web page.
 */
const originForm = /^[a-z][a-z\d+.-]*:\/\/[^/?#\s*]+$/i;

/**
 * A list of origins: a plain string, or an origin with a path or a trailing slash, never matched
 * and was refused as a 403 later.
 */
function checkOrigins(name: string, origins: unknown): void {
  if (origins === undefined) return;
  if (!Array.isArray(origins))
    throw new ProceedConfigError(`mcpPlugin: ${name} is a list of origins, not ${JSON.stringify(origins)}`);
  for (const origin of origins)
    if (typeof origin !== 'string' || !originForm.test(origin))
      throw new ProceedConfigError(
        `mcpPlugin: ${name} holds origins as a browser names them (https://app.example.com), not ${JSON.stringify(origin)}`,
      );
}

/** Registers the MCP endpoint (docs/mcp.md). */
export async function mcpPlugin(app: App, options: McpPluginOptions = {}): Promise<void> {
  refuseUnknownOptions('mcpPlugin', options, mcpKeys);
  const { pageSize } = options;
  // Zero would page forever (every page empty, each with a next cursor); a fraction breaks cursors.
  if (pageSize !== undefined && (!Number.isSafeInteger(pageSize) || pageSize < 1))
    throw new ProceedConfigError(
      `mcpPlugin: pageSize is a whole number of tools, at least 1, not ${pageSize}`,
    );
  checkOrigins('allowedOrigins', options.allowedOrigins);
  if (options.readOnly !== undefined && typeof options.readOnly !== 'boolean')
    throw new ProceedConfigError(
      `mcpPlugin: readOnly is true or false, not ${JSON.stringify(options.readOnly)}`,
    );
  const servers: unknown = options.authorizationServers;
  if (
    servers !== undefined &&
    (!Array.isArray(servers) || !servers.every((each) => typeof each === 'string' && URL.canParse(each)))
  )
    throw new ProceedConfigError(
      `mcpPlugin: authorizationServers is a list of the issuers' URLs, not ${JSON.stringify(servers)}`,
    );
  if (options.resource !== undefined && !URL.canParse(options.resource))
    throw new ProceedConfigError(
      `mcpPlugin: resource is the endpoint's absolute URL, not ${JSON.stringify(options.resource)}`,
    );
  if (options.path !== undefined && !options.path.startsWith('/'))
    throw new ProceedConfigError(`mcpPlugin: path starts with /, as a route's does, not ${options.path}`);
  const path = options.path ?? '/mcp';
  const exposure = new Exposure({ ...options, path });
  app.onListen(({ host }) => exposure.listening(host));
  const methods = new McpMethods(app, options);
  app.onReady(() => methods.load());

  app.route('POST', path, async (request) => {
    exposure.refuseForeign(request);
    const version = request.headers['mcp-protocol-version'];
    if (version !== undefined && !protocolVersions.includes(version as never))
      return rpcRefusal(rpc.invalidRequest, `Unsupported MCP-Protocol-Version ${version}`);
    // A message is JSON, as a procedure's body is, and not coded: the same rule and answers (415).
    const refusal = jsonBodyRefusal(request.headers);
    if (refusal !== undefined) throw refusal;
    const message = await readRequest(request);
    try {
      // A notification, or a client's answer: nothing to say back but 202, once its token holds.
      if (!('method' in message)) {
        if (message.status === 202) await methods.checkCredentials(callingOf(request));
        return message;
      }
      return await app.traceOperation(
        () => methods.operationOf(message, version),
        async (trace) => {
          try {
            return rpcAnswer(message.id, await methods.answer(message, request, trace));
          } catch (error) {
            if (!(error instanceof RpcError)) throw error;
            trace.failed(String(error.code));
            return rpcAnswer(message.id, error);
          }
        },
      );
    } catch (error) {
      if (error instanceof ProceedError && error.status === 401)
        throw exposure.unauthenticated(error, request);
      throw error;
    }
  });
  // Stateless: no stream of the server's own to open (GET), no session to end (DELETE). Any
  // method but POST is the pipeline's 405 with `Allow: POST`, as the protocol allows.
  for (const path of exposure.metadataPaths)
    app.route('GET', path, (request) => {
      exposure.refuseForeignHost(request);
      const resource = exposure.resourceOf(request);
      return jsonAnswer(200, {
        resource,
        authorization_servers: options.authorizationServers ?? [new URL(resource).origin],
        bearer_methods_supported: ['header'],
      });
    });
}
