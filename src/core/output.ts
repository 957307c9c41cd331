/**
 * Output serialization. Each output schema compiles once into a serializer that projects and
 * writes in one step: fields the schema does not declare are never written.
 */
import fastJson from 'fast-json-stringify';
import { projectionOf } from './projection.js';
import { everyViewField, recordCutter } from './record-views.js';
import {
  type JsonSchema,
  type StandardSchemaV1,
  toJsonSchema,
  transformsItsOutput,
  validate,
} from './schema.js';
import { serializationSchema } from './serialization-schema.js';

/** Writes an answer; `ctx`, the request's context, chooses the view of each per-record view's record. */
export type Serializer = (value: unknown, ctx?: unknown) => string | Promise<string>;

/** Thrown when a handler's result does not fit its declared output: a server bug, answered with a 500. */
export class OutputMismatchError extends Error {
  override readonly name = 'OutputMismatchError';
}

function hasDescription(json: JsonSchema): boolean {
  return Object.keys(json).length > 0;
}

/**
 * fast-json-stringify's writer for a JSON Schema, or undefined where the runtime refuses to
 * compile code from strings (Cloudflare Workers, while serving a request). Its projection is
 * asked for: where the engine's `JSON.stringify` is fast, it is (src/core/serialization-schema.ts).
 */
function compiledWriter(json: JsonSchema): ((value: unknown) => string) | undefined {
  try {
    return fastJson(serializationSchema(json) as unknown as Parameters<typeof fastJson>[0], {
      objectMechanism: 'native',
    });
  } catch (error) {
    if (error instanceof EvalError) return undefined;
    throw error;
  }
}

/**
 * Outside production every answer is validated too before it is written: the writer writes by the
 * JSON Schema and coerces as it goes (a literal's constant whatever the value, `'false'` as true,
 * 1.9 as 1), so a handler's wrong value is a 500 naming it in development and tests, where it is
 * made, instead of a wrong answer (docs/procedures.md). Production writes without the check.
 */
const checksAnswers = (): boolean =>
  (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?.NODE_ENV !==
  'production';

/** Validates an answer cut to what its schema declares (a whole row fits a strict view so). */
function answerCheck(
  schema: StandardSchemaV1,
  project: (value: unknown) => unknown,
): (value: unknown) => Promise<void> | undefined {
  const refuse = (result: Awaited<ReturnType<typeof validate>>): void => {
    if (result.ok) return;
    const reasons = result.errors.map((error) => `${error.path || '(root)'}: ${error.message}`).join('; ');
    throw new OutputMismatchError(`Output does not match its schema: ${reasons}`);
  };
  return (value) => {
    const result = validate(schema, project(value));
    if (result instanceof Promise) return result.then(refuse);
    refuse(result);
    return undefined;
  };
}

/**
 * Serializers already compiled, by schema: a view answers several procedures (the blog's start
 * asked for 22 serializers of 12 schemas), and a serializer holds nothing of the route it serves.
 */
const serializers = new WeakMap<StandardSchemaV1, Serializer>();

/**
 * Compiles the serializer of an output schema. Schemas that describe themselves as JSON Schema
 * go through fast-json-stringify; others (and every schema where code cannot be compiled) are
 * validated, cut to what the JSON Schema names (src/core/projection.ts), and written with
 * `JSON.stringify`.
 */
export function compileSerializer(schema: StandardSchemaV1 | undefined): Serializer {
  if (schema === undefined) return (value) => JSON.stringify(value ?? null);
  let serializer = serializers.get(schema);
  if (serializer === undefined) {
    serializer = compile(schema);
    serializers.set(schema, serializer);
  }
  return serializer;
}

function compile(schema: StandardSchemaV1): Serializer {
  // Records shown per record are cut to their views first (src/core/record-views.ts).
  const cut = recordCutter(schema);
  const json = toJsonSchema(schema, {
    io: 'output',
    ...(cut === undefined ? {} : { override: everyViewField }),
  });
  // A transform's output has no JSON Schema to write it by: it is validated (the transform runs)
  // and written by the path below, never handed to the writer whole.
  const transforms = transformsItsOutput(schema);
  const stringify = hasDescription(json) && !transforms ? compiledWriter(json) : undefined;
  if (stringify !== undefined) {
    const write =
      cut === undefined ? stringify : (value: unknown, ctx: unknown) => stringify(cut(value, ctx));
    const written = (value: unknown, ctx: unknown): string => {
      try {
        return write(value, ctx);
      } catch (error) {
        throw new OutputMismatchError(`Output does not match its schema: ${(error as Error).message}`, {
          cause: error,
        });
      }
    };
    const check = cut === undefined && checksAnswers() ? answerCheck(schema, projectionOf(json)) : undefined;
    if (check === undefined) return written;
    return (value, ctx) => {
      const checked = check(value);
      return checked === undefined ? written(value, ctx) : checked.then(() => written(value, ctx));
    };
  }
  const project = hasDescription(json) ? projectionOf(json) : undefined;
  // What a transform takes is a view: the value is cut to it before validation, so that a whole
  // row passes a strict view and the transform sees no field above it.
  const toInput = transforms ? projectionOf(toJsonSchema(schema, { io: 'input' })) : undefined;
  return async (value, ctx) => {
    let result: Awaited<ReturnType<typeof validate>>;
    try {
      const viewed = cut === undefined ? value : cut(value, ctx);
      result = await validate(schema, toInput === undefined ? viewed : toInput(viewed));
    } catch (error) {
      throw new OutputMismatchError(`Output does not match its schema: ${(error as Error).message}`, {
        cause: error,
      });
    }
    if (!result.ok) {
      const reasons = result.errors.map((error) => `${error.path || '(root)'}: ${error.message}`).join('; ');
      throw new OutputMismatchError(`Output does not match its schema: ${reasons}`);
    }
    return JSON.stringify(project === undefined ? result.value : project(result.value));
  };
}
