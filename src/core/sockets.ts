/**
 * WebSocket procedures (docs/sockets.md): a procedure declared with `.output(webSocket({ receive,
 * send }))` upgrades its GET to a WebSocket once its guards, input and steps have passed. Its
 * handler receives the validated messages of the client as an async iterable and sends its own
 * through the `send` schema's compiled serializer (a field above the view never leaves). This
 * module describes the declaration; src/core/socket-reply.ts runs the handler and checks each
 * message; frames, limits, keep-alives and shutdown live in src/http/sockets.ts.
 */

import type { Credentials } from './credentials.js';
import { ProceedConfigError } from './errors.js';
import { refuseUnknownOptions } from './options.js';
import type { StandardSchemaV1 } from './schema.js';

/** How much one socket may hold and how long it may stay silent (docs/sockets.md, "Limits"). */
export interface SocketLimits {
  /** The longest message the handler is given, in bytes of UTF-8; a longer one is answered with an error frame. */
  readonly maxMessageSize: number;
  /** Invalid messages (not JSON, not the schema's, too long, binary) a socket may send before it is closed with 1008. */
  readonly invalidLimit: number;
  /** Messages received and not yet taken by the handler; one more closes the socket with 1008. */
  readonly maxQueued: number;
  /** Bytes sent and not yet taken by the client before `send` waits (the handler's `yield` too). */
  readonly sendBuffer: number;
  /** ms between pings; a client that answered none of the last two is gone. */
  readonly pingInterval: number;
  /** ms between checks that the credentials which opened the socket still hold (not revoked). */
  readonly credentialsCheck: number;
}

/** The declaration behind `.output(webSocket({ receive, send }))`. */
export interface SocketOutput<
  In extends StandardSchemaV1 = StandardSchemaV1,
  Out extends StandardSchemaV1 = StandardSchemaV1,
> extends SocketLimits {
  readonly '~socket': true;
  /** What the client sends: each message is JSON validated by this schema. */
  readonly receive: In;
  /** What the server sends: each message is JSON written through this schema's serializer. */
  readonly send: Out;
}

export const socketDefaults: SocketLimits = Object.freeze({
  maxMessageSize: 64 * 1024,
  invalidLimit: 10,
  maxQueued: 100,
  sendBuffer: 1024 * 1024,
  pingInterval: 30_000,
  credentialsCheck: 60_000,
});

function wholeNumber(name: string, value: number, least: number, most: number): number {
  if (!Number.isInteger(value) || value < least || value > most)
    throw new ProceedConfigError(
      `webSocket: ${name} must be a whole number from ${least} to ${most} (got ${value})`,
    );
  return value;
}

/**
 * Declares a procedure that upgrades to a WebSocket (docs/sockets.md): the client's messages are
 * validated by `receive`, the server's written through `send`. Its handler gets `messages` (an
 * async iterable of the valid ones), `send` (resolves once the client can take more) and `signal`
 * (aborted when the socket closes), and may instead yield what it sends.
 *
 * @example
 * procedure().output(webSocket({ receive: Subscribe, send: Post.public })).query(async function* ({ messages }) { … })
 */
export function webSocket<In extends StandardSchemaV1, Out extends StandardSchemaV1>(
  options: { receive: In; send: Out } & Partial<SocketLimits>,
): SocketOutput<In, Out> {
  // `{ maxMessageBytes }` kept the default limit, silently; a missing schema failed at the first message.
  refuseUnknownOptions('webSocket', options, ['receive', 'send', ...Object.keys(socketDefaults)], {
    required: true,
  });
  for (const side of ['receive', 'send'] as const)
    if (typeof (options[side] as { '~standard'?: unknown } | undefined)?.['~standard'] !== 'object')
      throw new ProceedConfigError(`webSocket: ${side} is the schema of the messages (a Zod schema, say)`);
  const limits = { ...socketDefaults, ...definedOnly(options) };
  return Object.freeze({
    '~socket': true,
    receive: options.receive,
    send: options.send,
    maxMessageSize: wholeNumber('maxMessageSize', limits.maxMessageSize, 1, 16 * 1024 * 1024),
    invalidLimit: wholeNumber('invalidLimit', limits.invalidLimit, 1, 1000),
    maxQueued: wholeNumber('maxQueued', limits.maxQueued, 1, 100_000),
    sendBuffer: wholeNumber('sendBuffer', limits.sendBuffer, 1024, 256 * 1024 * 1024),
    pingInterval: wholeNumber('pingInterval', limits.pingInterval, 1000, 600_000),
    credentialsCheck: wholeNumber('credentialsCheck', limits.credentialsCheck, 100, 3_600_000),
  });
}

function definedOnly(options: Partial<SocketLimits>): Partial<SocketLimits> {
  const limits: Partial<Record<keyof SocketLimits, number>> = {};
  for (const key of Object.keys(socketDefaults) as (keyof SocketLimits)[])
    if (options[key] !== undefined) limits[key] = options[key];
  return limits;
}

export function isSocketOutput(value: unknown): value is SocketOutput {
  return (
    typeof value === 'object' && value !== null && (value as { '~socket'?: unknown })['~socket'] === true
  );
}

declare const socketIn: unique symbol;
declare const socketWire: unique symbol;
/** What a socket's client writes and reads: the schemas' other sides (input of `receive`, output of `send`). */
export interface SocketWire<Sends = unknown, Receives = unknown> {
  readonly sends: Sends;
  readonly receives: Receives;
}
/**
 * Marks what a socket procedure's client sends, for the types of the handler (`In`, as
 * `receive` outputs it) and of the typed client (`Wire`, before and after the schemas).
 */
export interface SocketMessages<In, Wire extends SocketWire = SocketWire> {
  readonly [socketIn]: In;
  readonly [socketWire]: Wire;
}

/**
 * What the handler of a socket procedure returns: nothing (it sends with `send`) or the messages
 * it yields. The mark carries the client's messages to the types that need them.
 */
export type SocketOf<In, Out, Wire extends SocketWire = SocketWire<In, Out>> =
  | AsyncIterable<Out>
  | undefined
  // biome-ignore lint/suspicious/noConfusingVoidType: an async handler that sends returns Promise<void>
  | void
  | SocketMessages<In, Wire>;

/** What a socket handler receives besides its input and context. */
export interface SocketHandlerOptions<In, Out> {
  /** The client's messages, each validated; ends when the socket closes. */
  readonly messages: AsyncIterable<In>;
  /** Sends one message; resolves once the client can take more (await it in a loop). */
  readonly send: (message: Out) => Promise<void>;
  /** Aborted when the socket closes (the client left, a limit closed it, the app shuts down). */
  readonly signal: AbortSignal;
  /**
   * Answers a message the handler cannot act on with an error frame of `error`'s problem, the
   * socket left open: it counts as an invalid message (`invalidLimit`).
   */
  readonly refuse: (error: unknown) => void;
}

/** The client's messages type of a socket procedure's declared output, or never. */
export type SocketInOf<T> = [Extract<T, SocketMessages<unknown>>] extends [SocketMessages<infer In>]
  ? In
  : never;
/** What a typed client sends and receives on a socket procedure's declared output, or never (`any` too). */
export type SocketWireOf<T> = 0 extends 1 & T
  ? never
  : [Extract<T, SocketMessages<unknown>>] extends [never]
    ? never
    : Extract<T, SocketMessages<unknown>> extends SocketMessages<unknown, infer Wire>
      ? Wire
      : never;
/** The server's messages type of a socket procedure's declared output. */
export type SocketOutOf<T> =
  Extract<T, AsyncIterable<unknown>> extends AsyncIterable<infer Out> ? Out : never;

/** How the socket a handler runs on is driven: what src/http/sockets.ts gives the core. */
export interface SocketChannel {
  readonly messages: AsyncIterable<unknown>;
  /** Sends one message's JSON text; resolves once the client can take more. */
  readonly send: (text: string) => Promise<void>;
  readonly signal: AbortSignal;
  /**
   * Ends the socket as a failed handler does (a problem frame, then the close): for a message the
   * handler sent that does not fit `send`, whether or not it awaited the send.
   */
  readonly fail: (error: unknown) => void;
  /** Answers one message with an error frame, as an invalid one is. */
  readonly refuse: (error: unknown) => void;
}

/** A socket answer, from the core to the HTTP layer: what runs once the upgrade is done. */
export interface SocketAnswer {
  readonly limits: SocketLimits;
  /** What signed in the handshake, when anything kept it: the socket ends when they lapse. */
  readonly credentials: Credentials | undefined;
  /**
   * Whether the route's guards still pass for the context as the last check of the credentials
   * left it (undefined without guards or without a check): false ends the socket with 4403.
   */
  readonly stillAllowed: (() => Promise<boolean>) | undefined;
  /** Validates one message the client sent, parsed from JSON; throws a ValidationError. */
  readonly check: (message: unknown) => unknown;
  /**
   * Runs the handler on the open socket: resolves when it returns (its yielded messages sent),
   * rejects with what it threw.
   */
  readonly run: (channel: SocketChannel) => Promise<void>;
}
