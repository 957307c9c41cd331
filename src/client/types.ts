/**
 * The client's types: from the server's collections to typed functions. Everything here is
 * erased at compile time, so a browser bundle imports no server code, only these shapes.
 */

import type { ErrorCode, ErrorDefinition } from '../core/errors.js';
import type { ServerEvent, StreamReconnect } from '../core/events.js';
import type { AnyProcedure, Collection } from '../core/procedure.js';
import type { SocketWire, SocketWireOf } from '../core/sockets.js';
import type { ProblemError } from './errors.js';
import type { ClientSocket } from './sockets.js';

/**
 * What `createClient` takes as its type argument: the collections the server mounts, as a
 * tuple (`[posts, users] as const`, the same value passed to `app.mount`) or a record
 * (`{ posts, users }`). The client is keyed by each collection's own name either way.
 */
export type ApiShape = readonly Collection[] | Readonly<Record<string, Collection>>;

type CollectionsOf<A extends ApiShape> = A extends readonly Collection[]
  ? A[number]
  : A extends Readonly<Record<string, Collection>>
    ? A[keyof A]
    : never;

/** Options of a single call. */
export interface CallOptions {
  /** Aborts the request. */
  signal?: AbortSignal;
  /** Extra headers for this call; they win over the client's. */
  headers?: HeadersInit;
  /**
   * Told of the answer's status and headers (its `ETag`, to send back as `If-Match`) before the
   * call resolves or rejects with it; a JSON or file answer's, not an event stream's or a socket's.
   */
  onResponse?: (response: AnswerHead) => void;
}

/** What {@link CallOptions.onResponse} is told of an answer. */
export interface AnswerHead {
  readonly status: number;
  readonly headers: Headers;
}

type DefinedKeys<T> = {
  [K in keyof T]-?: K extends symbol ? never : undefined extends T[K] ? never : K;
}[keyof T];
type MaybeKeys<T> = {
  [K in keyof T]-?: K extends symbol ? never : undefined extends T[K] ? K : never;
}[keyof T];
type Flatten<T> = { [K in keyof T]: T[K] } & {};

/** Keys JSON drops (symbols) or may leave out (a value that may be undefined). */
type UnsureKeys<T> = {
  [K in keyof T]-?: K extends symbol ? K : undefined extends T[K] ? K : never;
}[keyof T];

// An object none of whose keys is unsure keeps its keys as they are: one mapped type, where
// splitting the keys in two costs the checker more than twice as much on every output of an API.
type JsonObject<T> = [UnsureKeys<T>] extends [never]
  ? { -readonly [K in keyof T]: Jsonify<T[K]> }
  : Flatten<
      { [K in DefinedKeys<T>]: Jsonify<T[K]> } & { [K in MaybeKeys<T>]?: Jsonify<Exclude<T[K], undefined>> }
    >;

type ArrayElement<T> = [T] extends [undefined] ? null : Jsonify<T>;

/**
 * The type a value has after a JSON round trip: `Date` (anything with `toJSON`) becomes what
 * `toJSON` returns, `undefined` properties become optional, functions and symbols disappear.
 *
 * @example
 * type Wire = Jsonify<{ at: Date; n?: number | undefined }>; // { at: string; n?: number }
 */
export type Jsonify<T> = T extends { toJSON(...args: never[]): infer J }
  ? Jsonify<J>
  : T extends string | number | boolean | null
    ? T
    : T extends bigint | symbol | undefined | ((...args: never[]) => unknown)
      ? never
      : T extends readonly unknown[]
        ? { -readonly [K in keyof T]: ArrayElement<T[K]> }
        : T extends object
          ? JsonObject<T>
          : T;

type UpperLetter =
  | 'A'
  | 'B'
  | 'C'
  | 'D'
  | 'E'
  | 'F'
  | 'G'
  | 'H'
  | 'I'
  | 'J'
  | 'K'
  | 'L'
  | 'M'
  | 'N'
  | 'O'
  | 'P'
  | 'Q'
  | 'R'
  | 'S'
  | 'T'
  | 'U'
  | 'V'
  | 'W'
  | 'X'
  | 'Y'
  | 'Z';

/** A `delete*` name, by the same rule as `conventionOf`: the prefix, then the end or a capital. */
type DeleteName = 'delete' | `delete${UpperLetter}${string}`;

// The procedure's types are read by indexing rather than `infer`: a pattern with `infer` is a new
// type on every use, three per procedure of an API (docs/performance.md, "The type checker").
interface TypeCarrier {
  readonly '~types'?: unknown;
}
type TypesOf<P> = P extends TypeCarrier ? NonNullable<P['~types']> : never;
type TypeOf<P, K extends string> =
  TypesOf<P> extends { readonly [Key in K]: unknown } ? TypesOf<P>[K] : never;

/**
 * What a procedure's caller sends: the input schema's input type (before defaults and
 * transforms).
 *
 * @example
 * type In = ProcedureInput<typeof posts.procedures.listPosts>; // { limit?: number; … }
 */
export type ProcedureInput<P> = SentInput<TypeOf<P, 'clientInput'>>;

/** A file field as the client sends it: any `Blob` (a `File` brings its name). */
type BlobForFile<T> = T extends File ? Blob : T extends readonly File[] ? Blob[] : T;

/** Whether an object input holds a file field (docs/uploads.md). */
type HasFile<I> = [Extract<I[keyof I], File | readonly File[]>] extends [never] ? false : true;

/** An input with its files as Blobs; other inputs as they are. */
type SentInput<I> = I extends File
  ? Blob
  : I extends object
    ? HasFile<I> extends true
      ? { [K in keyof I]: BlobForFile<I[K]> }
      : I
    : I;

/**
 * What a procedure's caller receives: the output as JSON (dates as ISO strings). A procedure
 * that returns nothing answers `{ success: true }` when it is a `delete*` and `null` otherwise,
 * exactly as the server writes it.
 *
 * @example
 * type Out = ProcedureOutput<typeof posts.procedures.getPost, 'getPost'>;
 */
export type ProcedureOutput<P, N extends string = string> = OutputOnWire<
  TypeOf<P, 'output'>,
  TypeOf<P, 'answer'>,
  N
>;

/** An output as its client receives it, by how it is sent (the builder's `AnswerKind`). */
type OutputOnWire<O, A, N extends string> = A extends 'json'
  ? // biome-ignore lint/suspicious/noConfusingVoidType: a handler that returns nothing has output type void
    [O] extends [void]
    ? NothingOnWire<O, N>
    : Jsonify<O>
  : A extends 'file'
    ? File
    : A extends 'empty'
      ? undefined
      : A extends 'events'
        ? [O] extends [AsyncIterable<infer E>]
          ? AsyncIterable<Jsonify<Exclude<E, ServerEvent<unknown> | StreamReconnect>>>
          : never
        : SocketWireOf<O> extends SocketWire<infer Sends, infer Receives>
          ? ClientSocket<Sends, Jsonify<Receives>>
          : never;

/**
 * A JSON procedure whose output is void, undefined, `any` or `never`: a handler that returns
 * nothing answers `{ success: true }` for a delete and `null` otherwise; `any` stays `any`, and a
 * handler that always throws resolves to nothing (`never`).
 */
type NothingOnWire<O, N extends string> = 0 extends 1 & O
  ? O
  : [O] extends [never]
    ? never
    : N extends DeleteName
      ? { success: true }
      : null;

/**
 * What a call resolves to: the output, or, for a procedure whose handler chooses among several
 * statuses (`.rest({ status: [200, 201] })`), `{ status, data }`, a union discriminated by status
 * (`data` is undefined for 204).
 *
 * @example
 * const saved = await client.bookmarks.saveBookmark(input);
 * if (saved.status === 201) console.log('created', saved.data.id);
 */
export type ProcedureResult<P, N extends string = string> = [TypeOf<P, 'statuses'>] extends [never]
  ? ProcedureOutput<P, N>
  : ResultByStatus<TypeOf<P, 'statuses'>, P, N>;

type ResultByStatus<S, P, N extends string> = S extends 204
  ? { status: 204; data: undefined }
  : { status: S; data: ProcedureOutput<P, N> };

/**
 * One procedure on the client. The input may be left out when the procedure takes none or
 * when every field of it is optional.
 */
export type ProcedureCall<P, N extends string> =
  undefined extends ProcedureInput<P>
    ? (input?: ProcedureInput<P>, options?: CallOptions) => Promise<ProcedureResult<P, N>>
    : Record<never, never> extends ProcedureInput<P>
      ? (input?: ProcedureInput<P>, options?: CallOptions) => Promise<ProcedureResult<P, N>>
      : (input: ProcedureInput<P>, options?: CallOptions) => Promise<ProcedureResult<P, N>>;

/** The procedures of one collection, by name. */
export type CollectionClient<R extends Record<string, AnyProcedure>> = {
  readonly [N in keyof R & string]: ProcedureCall<R[N], N>;
};

/** An app's own error codes, as `defineErrors` returns them (pass `typeof appErrors`). */
export type AppErrors = Readonly<Record<string, ErrorDefinition>>;

/** Every code a client of this API can meet: Proceed's and the app's own. */
export type ProblemCodeOf<E extends AppErrors> = ErrorCode | (keyof E & string);

/**
 * Whether `error` is a problem the server answered with this code; narrows it. A code that is
 * neither Proceed's nor the app's is a compile error.
 */
export type ProblemMatcher<E extends AppErrors> = <C extends ProblemCodeOf<E>>(
  error: unknown,
  code: C,
) => error is ProblemError & { readonly code: C };

/**
 * The typed client of an API: collection name → procedure name → function, and `$isProblem`,
 * which matches errors by the codes of Proceed and of the app (`E`, from `defineErrors`).
 *
 * @example
 * const client: Client<typeof api> = createClient<typeof api>({ baseUrl });
 * const page = await client.posts.listPosts({ limit: 5 });
 */
export type Client<A extends ApiShape, E extends AppErrors = Record<never, never>> = {
  readonly [C in CollectionsOf<A> as C['name']]: CollectionClient<C['procedures']>;
} & { readonly $isProblem: ProblemMatcher<E> };
