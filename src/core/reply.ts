/**
 * What a procedure's call answers, made from what its handler returned: the status, the JSON
 * body through the output's serializer, a created record's `Location`, a version for its `ETag`;
 * or a file, or an event stream (docs/procedures.md, "What a handler returns").
 */
import type { Call, CompileOptions, Reply } from './call.js';
import { credentialsOf } from './credentials.js';
import type { EventsAnswer } from './events.js';
import { FileAnswer } from './files.js';
import { isPlainObject } from './input-assembly.js';
import { fillPath } from './naming.js';
import { compileSerializer, OutputMismatchError, type Serializer } from './output.js';
import { RequestPrecondition, versionOf } from './precondition.js';
import type { ResponseControl } from './response.js';
import type { RouteEntry } from './routes.js';
import { guardsStillAllow } from './run-guards.js';
import { unsendableKind } from './unsendable.js';

const deleteSuccess = '{"success":true}';

type Serialize = (value: unknown, ctx: Call['ctx']) => string | Promise<string>;

/** The body's writer: the output's serializer (one per view for a per-request choice), or JSON as it is. */
function replySerializer(route: RouteEntry): Serialize {
  const { output } = route.definition;
  const isDelete = route.convention?.prefix === 'delete';
  if (output?.kind === 'download' || output?.kind === 'events' || output?.kind === 'socket') {
    return () => '';
  }
  if (output === undefined) {
    return isDelete
      ? (value) => (value === undefined ? deleteSuccess : JSON.stringify(value))
      : (value) => JSON.stringify(value ?? null);
  }
  if (output.kind === 'fixed') {
    const serializer = compileSerializer(output.schema);
    return (value, ctx) => serializer(value, ctx);
  }
  const serializers = new Map<string, Serializer>(
    Object.entries(output.choices).map(([key, schema]) => [key, compileSerializer(schema)]),
  );
  return (value, ctx) => {
    const key = output.select(ctx as never);
    const serializer = serializers.get(key);
    if (serializer === undefined)
      throw new Error(`${route.collection}.${route.name}: output choice "${key}" does not exist`);
    return serializer(value, ctx);
  };
}

/** Makes a call's reply from what its handler returned; `response` holds what the handler chose. */
export function replyMaker(
  route: RouteEntry,
): (call: Call, result: unknown, response: ResponseControl<never>) => Reply | Promise<Reply> {
  const { output, versioning } = route.definition;
  const readVersion = versioning?.read;
  const owner = `${route.collection}.${route.name}`;
  const isCreate = route.convention?.prefix === 'create';
  const serialize = replySerializer(route);
  const { recordsPath } = route;
  const recordsUnderParams = recordsPath !== route.collectionPath;
  const locationOf = (result: unknown, params: Record<string, string>): string | undefined => {
    if (!isCreate || recordsPath === undefined || !isPlainObject(result)) return undefined;
    const id = result.id;
    if (typeof id !== 'string' && typeof id !== 'number') return undefined;
    const records = recordsUnderParams ? fillPath(recordsPath, params) : recordsPath;
    return `${records}/${encodeURIComponent(String(id))}`;
  };

  // Synchronous unless the serializer is not: each avoided promise is a microtask less per
  // request (docs/architecture.md, "A request").
  return (call, result, response) => {
    const { precondition } = call.ctx as { precondition?: unknown };
    if (precondition instanceof RequestPrecondition && !precondition.checked)
      throw new Error(
        `${owner}: a .versioned() write must call ctx.precondition.check(version) before it writes; this call was sent If-Match and never checked it (docs/http-caching.md)`,
      );
    const status = response.chosenStatus ?? route.successStatus;
    // 204 has no body: whatever the handler returned stays on the server (docs/procedures.md).
    if (status === 204) return { status: 204, body: '', location: undefined, version: undefined };
    if (output?.kind === 'download') {
      if (!(result instanceof FileAnswer))
        throw new OutputMismatchError(
          `${owner} is declared .output(download()) and returned ${unsendableKind(result) ?? (typeof result === 'object' && result !== null ? 'plain data' : String(result))}: return sendFile(…) or fileAt(…) (docs/files.md)`,
        );
      return { status, body: '', location: undefined, version: undefined, file: result };
    }
    const unsendable = unsendableKind(result);
    if (unsendable !== undefined)
      throw new OutputMismatchError(
        `${owner} returned ${unsendable}, which a JSON answer cannot carry: return plain data (docs/procedures.md, "What a handler returns")`,
      );
    const version = readVersion === undefined ? undefined : versionOf(readVersion(result), owner);
    const location = status === 201 ? locationOf(result, call.params) : undefined;
    const body =
      call.trace === undefined
        ? serialize(result, call.ctx)
        : call.trace.step('serialization', owner, () => serialize(result, call.ctx));
    if (body instanceof Promise) return body.then((text) => ({ status, body: text, location, version }));
    return { status, body, location, version };
  };
}

/**
 * For a procedure declared with `.output(eventStream())`, what runs its handler and hands the
 * stream it returns to the adapter; undefined for any other.
 */
export function eventStreamer(
  route: RouteEntry,
  compileOptions: CompileOptions = {},
): ((call: Call, input: unknown, response: ResponseControl<never>) => Reply) | undefined {
  const { output, handler, guards } = route.definition;
  if (output?.kind !== 'events') return undefined;
  const events = output;
  const writeEvent = compileSerializer(events.schema);
  const owner = `${route.collection}.${route.name}`;
  return (call, input, response) => {
    const controller = new AbortController();
    const lastEventId = (call.ctx as { request?: { headers?: Record<string, unknown> } }).request?.headers?.[
      'last-event-id'
    ];
    const options = {
      input: input as never,
      ctx: call.ctx as never,
      response,
      ...({
        lastEventId: typeof lastEventId === 'string' ? lastEventId : undefined,
        signal: controller.signal,
      } as object),
    } as never;
    const { trace } = call;
    const source =
      trace === undefined
        ? handler(options)
        : trace.stream('handler', owner, () => handler(options), controller.signal);
    if (typeof (source as AsyncIterable<unknown> | null)?.[Symbol.asyncIterator] !== 'function') {
      controller.abort();
      throw new OutputMismatchError(
        `${owner} is declared .output(eventStream()) and returned ${unsendableKind(source) ?? String(source)}: make the handler an async function* that yields its events (docs/events.md)`,
      );
    }
    const credentials = credentialsOf(call.ctx);
    const answer: EventsAnswer = {
      source: source as AsyncIterable<unknown>,
      serialize:
        trace === undefined
          ? (value: unknown) => writeEvent(value, call.ctx)
          : (value: unknown) => trace.step('event', owner, () => writeEvent(value, call.ctx)),
      keepAlive: events.keepAlive,
      signal: controller.signal,
      abort: () => controller.abort(),
      holder: credentials?.holder,
      credentials,
      credentialsCheck: events.credentialsCheck,
      stillAllowed: guardsStillAllow(
        guards,
        call.ctx,
        owner,
        compileOptions,
        credentials?.stillHold !== undefined,
      ),
    };
    return { status: 200, body: '', location: undefined, version: undefined, events: answer };
  };
}
