/**
 * MCP tools from procedures (docs/mcp.md): which procedures are tools, and what an agent is told
 * of each (its name, its input's and output's JSON Schemas, hints from its method).
 */

import { ProceedConfigError } from '../core/errors.js';
import { conventionOf } from '../core/naming.js';
import { closestName } from '../core/options.js';
import type { MountedRoute } from '../core/route-table.js';
import { type JsonSchema, toJsonSchema } from '../core/schema.js';
import { mapSubschemas } from '../core/subschemas.js';
import { uploadShapeOf } from '../core/uploads.js';
import { maxParamLength } from '../http/url.js';
import { strictBody } from '../openapi/schema-facts.js';

/** A tool as `tools/list` describes it (MCP's `Tool`). */
export interface ToolDescription {
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly inputSchema: JsonSchema;
  readonly outputSchema?: JsonSchema;
  readonly annotations: {
    readonly title?: string;
    readonly readOnlyHint: boolean;
    readonly destructiveHint: boolean;
    readonly idempotentHint: boolean;
    readonly openWorldHint: boolean;
  };
}

export interface Tool {
  readonly route: MountedRoute;
  readonly description: ToolDescription;
}

/** Why a procedure cannot be a tool, or undefined: MCP's results carry JSON, not bytes or a stream. */
function unsuitable(route: MountedRoute): string | undefined {
  const { output } = route.definition;
  if (output?.kind === 'events')
    return 'it streams events, which a tool result cannot carry (subscribe over its REST route)';
  if (output?.kind === 'socket') return 'it opens a WebSocket, which a tool call cannot hold open';
  if (output?.kind === 'download') return 'it answers with a file, which a tool result does not carry as one';
  if (uploadShapeOf(route.definition, route.inputMode) !== undefined)
    return 'it takes files, which tool arguments (JSON) cannot carry';
  return undefined;
}

/** A schema as a tool's: the JSON Schema dialect is MCP's own, so no `$schema` of its own. */
function withoutDialect(schema: JsonSchema): JsonSchema {
  const { $schema: _dialect, ...rest } = schema;
  return rest;
}

/**
 * The arguments' schema: the input's, with `additionalProperties: false` on each object the server
 * checks strictly (an unknown key there is refused), as the OpenAPI document's bodies say.
 */
function inputSchemaOf(route: MountedRoute): JsonSchema {
  const { input } = route.definition;
  const schema =
    input === undefined
      ? { type: 'object', properties: {}, additionalProperties: false }
      : strictBody(withoutDialect(toJsonSchema(input, { io: 'input' })));
  if (schema.type !== 'object')
    throw new ProceedConfigError(
      `${route.collection}.${route.name} cannot be an MCP tool: its input is not an object, and tool arguments are (docs/mcp.md)`,
    );
  // A path parameter the input does not name is an argument all the same: the call needs it.
  const missing = route.params.filter((name) => !Object.hasOwn(schema.properties ?? {}, name));
  if (missing.length === 0) return schema;
  const properties: Record<string, JsonSchema> = { ...(schema.properties as Record<string, JsonSchema>) };
  for (const name of missing) properties[name] = { type: 'string', minLength: 1, maxLength: maxParamLength };
  const required = [...((schema.required as string[] | undefined) ?? []), ...missing];
  return { ...schema, properties, required };
}

/**
 * The output's schema where it is one object for every caller; a tool's `outputSchema` must be one.
 * It asserts no `format`: clients check `structuredContent` against it (the SDK's with Ajv's
 * formats), whose definitions are not the validator's that let the value in (Zod takes the address
 * `a@b-.test`, Ajv's `email` does not), so a format would make a client refuse a right answer. What
 * the value's own validator checked stays, as its `pattern` (docs/mcp.md, "Output schemas").
 */
function outputSchemaOf(route: MountedRoute): JsonSchema | undefined {
  const { output } = route.definition;
  if (output?.kind !== 'fixed') return undefined;
  const schema = withoutFormats(withoutDialect(toJsonSchema(output.schema, { io: 'output' })));
  return schema.type === 'object' ? schema : undefined;
}

/** A schema without the `format` keyword at any depth (a property named `format` stays). */
function withoutFormats(schema: JsonSchema): JsonSchema {
  const { format: _format, ...rest } = schema;
  return mapSubschemas(rest, withoutFormats);
}

/** A create (`create*`, by its name's convention, a POST): it adds a record and changes none. */
function createsOnly(route: MountedRoute): boolean {
  return route.method === 'POST' && conventionOf(route.name)?.prefix === 'create';
}

export interface ToolSelection {
  /** Collections whose every procedure (that can be one) is a tool, beside those marked `.mcp()`. */
  readonly collections?: readonly string[];
  /** Reads only: the writes of `collections` are no tools, and one marked `.mcp()` is refused. */
  readonly readOnly?: boolean;
}

/**
 * The app's tools, in route order. A procedure marked `.mcp()` that cannot be a tool is a
 * start-up error; one of a listed collection is left out (docs/mcp.md says which).
 */
export function toolsOf(routes: readonly MountedRoute[], selection: ToolSelection): Tool[] {
  const collections = new Set(selection.collections ?? []);
  // A misspelt collection gave no tools and no word: named at start-up, as docsPlugin's are.
  const mounted = [...new Set(routes.map((route) => route.collection))];
  for (const name of collections)
    if (!mounted.includes(name)) {
      const near = closestName(name, mounted);
      throw new ProceedConfigError(
        `mcpPlugin: no collection named ${JSON.stringify(name)} is mounted${near === undefined ? '' : ` (did you mean ${JSON.stringify(near)}?)`}. Mounted: ${mounted.join(', ')}`,
      );
    }
  const tools: Tool[] = [];
  const names = new Map<string, MountedRoute>();
  for (const route of routes) {
    const { mcp, meta, method, idempotent } = { ...route.definition, method: route.method };
    if (mcp === undefined && !collections.has(route.collection)) continue;
    if (mcp?.destructive !== undefined && method === 'GET')
      throw new ProceedConfigError(
        `${route.collection}.${route.name}: .mcp({ destructive }) is for a write; a read (GET) never is one`,
      );
    const reason =
      selection.readOnly === true && method !== 'GET'
        ? `it writes (${method}), and mcpPlugin is readOnly`
        : unsuitable(route);
    if (reason !== undefined) {
      if (mcp === undefined) continue;
      throw new ProceedConfigError(`${route.collection}.${route.name} cannot be an MCP tool: ${reason}`);
    }
    const taken = names.get(route.name);
    if (taken !== undefined)
      throw new ProceedConfigError(
        `Two MCP tools would be named ${route.name} (${taken.collection} and ${route.collection}): a tool is named after its procedure, so rename one (docs/mcp.md)`,
      );
    names.set(route.name, route);
    const title = mcp?.title ?? meta.summary;
    const description = mcp?.description ?? meta.description ?? meta.summary;
    const outputSchema = outputSchemaOf(route);
    tools.push({
      route,
      description: {
        name: route.name,
        ...(title === undefined ? {} : { title }),
        ...(description === undefined ? {} : { description }),
        inputSchema: inputSchemaOf(route),
        ...(outputSchema === undefined ? {} : { outputSchema }),
        annotations: {
          ...(title === undefined ? {} : { title }),
          readOnlyHint: method === 'GET',
          destructiveHint: method !== 'GET' && (mcp?.destructive ?? !createsOnly(route)),
          idempotentHint: method === 'GET' || method === 'PUT' || method === 'DELETE' || idempotent,
          // The tools act on this app's data alone.
          openWorldHint: false,
        },
      },
    });
  }
  return tools;
}
