/**
 * A call's input, assembled from its path parameters and its query string or body before
 * validation (docs/procedures.md, "Input").
 */
import type { Call } from './call.js';
import type { Coercer } from './coerce.js';
import { ValidationError } from './errors.js';
import { assignOwn } from './objects.js';
import type { RouteEntry } from './routes.js';
import { checksNothing, keyShapeOf, refuseUnknownKeys, shapeAt } from './unknown-keys.js';

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
  const shape = keyShapeOf(route.definition.input);
  const unchecked = checksNothing(shape);
  if (inputMode === 'query') {
    const query = { noun: 'query parameter', exempt };
    return (call) => {
      const input = coerce(assignOwn(assignOwn({}, call.query), call.params));
      if (!unchecked) refuseUnknownKeys(input, shape, query);
      return input;
    };
  }
  const data = shapeAt(shape, 'data');
  const update = { noun: 'key', path: 'data' };
  const body = { noun: 'key', exempt };
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
    if (!unchecked) refuseUnknownKeys(sent, shape, body);
    return reviveDates(assignOwn(assignOwn({}, sent), params));
  };
}
