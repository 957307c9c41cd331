/**
 * A call's input, assembled from its path parameters and its query string or body before
 * validation (docs/procedures.md, "Input").
 */
import type { Call } from './call.js';
import { type Coercer, createBodyDateCoercer, createCoercer } from './coerce.js';
import { ValidationError } from './errors.js';
import { refuseNul } from './nul.js';
import { assignOwn } from './objects.js';
import type { RouteEntry } from './routes.js';
import { type Validation, validate } from './schema.js';
import {
  checksNothing,
  type KeyShape,
  keyShapeOf,
  noKeys,
  refuseUnknownKeys,
  shapeAt,
} from './unknown-keys.js';
import { DeferredBody } from './uploads.js';

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An update's input: its path parameters and, under `data`, its body. */
export function withData(params: unknown, body: unknown): Record<string, unknown> {
  const input: Record<string, unknown> = assignOwn({}, params as object);
  input.data = body;
  return input;
}

/**
 * Assembles a call's input from its query string or JSON body and its path parameters. A key the
 * input does not name is refused here, before anything runs, rather than dropped by the validator:
 * a misspelt key (`?tags=` for `?tag=`, `is_private` for `isPrivate`) would otherwise change
 * what the request means (docs/procedures.md, "Keys the input does not name"). Path parameters
 * join the input and are never unknown; an update's body is checked where it sits, under `data`.
 */
export function assembler(
  route: RouteEntry,
  coerce: Coercer,
  reviveDates: (value: unknown) => unknown,
): (call: Call, body: unknown) => unknown {
  const { inputMode, params: exempt } = route;
  // A procedure without `.input()` takes nothing but its path: `?hard=true` on a DELETE, or a key
  // of a POST's body, would otherwise be ignored under a 200 (docs/procedures.md, "Keys the
  // input does not name").
  const { input } = route.definition;
  const shape = input === undefined ? noKeys : keyShapeOf(input);
  const unchecked = checksNothing(shape);
  if (inputMode === 'query') {
    const query = { noun: 'query parameter', exempt };
    const args = { noun: 'argument', exempt };
    // A socket's handshake may carry the bearer token in the query (a browser's WebSocket sends no
    // header): it is the auth plugin's, never the input's (docs/sockets.md, "Authentication").
    const tokenInQuery = route.definition.output?.kind === 'socket';
    // EventSource polyfills add `?lastEventId=` to a reconnect beside the `Last-Event-ID` header,
    // which alone says where a stream resumes: never refused as unknown, never the input's.
    const resumeInQuery =
      route.definition.output?.kind === 'events' && shape.fields?.has('lastEventId') !== true;
    const { method } = route;
    return (call, body) => {
      if (body !== undefined) refuseBodyOfQuery(body, method);
      const sent: Record<string, unknown> = assignOwn({}, call.query);
      if (tokenInQuery) delete sent.access_token;
      if (resumeInQuery) delete sent.lastEventId;
      const input = coerce(assignOwn(sent, call.params));
      if (!unchecked) refuseUnknownKeys(input, shape, call.givenAsArguments === true ? args : query);
      return input;
    };
  }
  const data = shapeAt(shape, 'data');
  const update = { noun: 'key', path: 'data' };
  const body = { noun: 'key', exempt };
  // A tool call's arguments are no body to the agent that sent them, a write's as a read's.
  const args = { noun: 'argument', exempt };
  return (call, sent) => {
    const params = coerce({ ...call.params });
    if (inputMode === 'update') {
      refuseUnknownKeys(sent, data, update);
      return reviveDates(withData(params, sent));
    }
    if (sent === undefined || sent === null) return params;
    if (!isPlainObject(sent)) {
      throw new ValidationError([{ path: '', message: 'The request body must be a JSON object' }]);
    }
    if (!unchecked) refuseUnknownKeys(sent, shape, call.givenAsArguments === true ? args : body);
    return reviveDates(assignOwn(assignOwn({}, sent), params));
  };
}

/**
 * A body sent to a route that reads its input from the query string (a DELETE): refused, key by
 * key, rather than dropped, since `{"hard": true}` would otherwise delete softly and answer 200.
 * An empty object carries nothing and passes.
 */
function refuseBodyOfQuery(body: unknown, method: string): void {
  const where = `A ${method} reads its input from the path and the query string, not its body`;
  if (!isPlainObject(body)) throw new ValidationError([{ path: '', message: where }]);
  const keys = Object.keys(body);
  if (keys.length > 0)
    throw new ValidationError(
      keys.map((key) => ({ path: key, message: `${where}: send it as ?${encodeURIComponent(key)}=` })),
    );
}

/**
 * What reads a call's input: assembled, NUL-free and validated, then handed to `then`;
 * synchronous unless reading the body or validating waits. `then` takes the call rather than
 * closing over it: no function is made per request.
 */
export function inputReader(
  route: RouteEntry,
): <R>(call: Call, then: (call: Call, value: unknown) => R) => R | Promise<R> {
  const { inputMode } = route;
  const inputSchema = route.definition.input;
  const coerce = createCoercer(inputSchema);
  const reviveDates = createBodyDateCoercer(inputSchema);
  const assemble = assembler(route, coerce, reviveDates);
  // An upload's fields arrive as text, like a query string's, and are coerced the same way; its
  // files pass as they are. A raw body is the file itself (docs/uploads.md). A part the input does
  // not name is refused, as a JSON body's key is, not dropped by the validator.
  // Made at the first form: most routes take none.
  let formShape: KeyShape | undefined;
  const formParts = { noun: 'form field', exempt: route.params };
  const assembleUpload = (call: Call, body: unknown): unknown => {
    if (body instanceof Blob)
      return inputMode === 'update' ? withData(coerce({ ...call.params }), body) : body;
    formShape ??= keyShapeOf(inputSchema);
    refuseUnknownKeys(body, formShape, formParts);
    return coerce(assignOwn(assignOwn({}, body as Record<string, unknown>), call.params));
  };
  const checkedInput = (result: Validation<unknown>): unknown => {
    if (!result.ok) throw new ValidationError(result.errors);
    return result.value;
  };
  const checkInput = <R>(
    call: Call,
    input: unknown,
    then: (call: Call, value: unknown) => R,
  ): R | Promise<R> => {
    refuseNul(input);
    if (inputSchema === undefined) return then(call, input);
    const pending = validate(inputSchema, input);
    if (pending instanceof Promise) return pending.then((result) => then(call, checkedInput(result)));
    return then(call, checkedInput(pending));
  };
  return <R>(call: Call, then: (call: Call, value: unknown) => R): R | Promise<R> => {
    const { body } = call;
    if (body instanceof DeferredBody)
      return body.read().then((read) => checkInput(call, assembleUpload(call, read), then));
    return checkInput(call, assemble(call, body), then);
  };
}
