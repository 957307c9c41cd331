/**
 * One connection of a typed client's socket (src/client/sockets.ts): opening it, telling why it
 * could not be opened, and whether another attempt may succeed.
 */
import { ClientError, ProblemError, type ReceivedProblem, retryStatuses } from './errors.js';

/**
 * The few members of a WebSocket the client uses: the standard one (browsers, Bun, Deno, Node 22)
 * and the `ws` package's both fit.
 */
export interface WebSocketLike {
  readonly readyState: number;
  readonly bufferedAmount: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: 'message', listener: (event: { readonly data: unknown }) => void): void;
  addEventListener(
    type: 'close',
    listener: (event: { readonly code: number; readonly reason: string }) => void,
  ): void;
  addEventListener(type: 'open' | 'error', listener: () => void): void;
}

/** A WebSocket class: `globalThis.WebSocket`, or `ws`'s default export on Node 20. */
export type WebSocketClass = new (url: string) => WebSocketLike;

/** How a socket is reached: the caller's URL (with a fresh token) and what refused a handshake. */
export interface SocketConnector {
  readonly label: string;
  /** The `ws:`/`wss:` URL of one handshake, with the token asked for again. */
  readonly url: () => Promise<string>;
  /** Why a handshake failed, asked of the route over HTTP: its problem, or undefined when it would pass. */
  readonly probe: (signal: AbortSignal) => Promise<ProblemError | undefined>;
  readonly WebSocket: WebSocketClass;
}

export function isErrorFrame(value: unknown): value is { type: 'error'; problem: ReceivedProblem } {
  if (typeof value !== 'object' || value === null) return false;
  const { type, problem } = value as { type?: unknown; problem?: unknown };
  return (
    type === 'error' &&
    typeof problem === 'object' &&
    problem !== null &&
    typeof (problem as { status?: unknown }).status === 'number'
  );
}

/** A failed connection, and whether another attempt may meet it again (`final`: it would not help). */
export type Opened = { readonly socket: WebSocketLike } | { readonly failure: Error; readonly final?: true };

/**
 * Opens one connection: the socket once open, or why it could not be (the route's problem, asked
 * over HTTP since a refused handshake tells a WebSocket nothing, or a network failure).
 */
export async function connect(
  connector: SocketConnector,
  signal: AbortSignal,
  attach: (socket: WebSocketLike) => void,
): Promise<Opened> {
  let url: string;
  try {
    url = await connector.url();
  } catch (error) {
    // The token function failed (signed out): the caller's own error, as a call's would be.
    return { failure: error instanceof Error ? error : new Error(String(error)), final: true };
  }
  if (signal.aborted) return { failure: closedError(connector) };
  let socket: WebSocketLike;
  try {
    socket = new connector.WebSocket(url);
    // Before anything can arrive: a message may follow the open event at once.
    attach(socket);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return { failure: new ClientError('network', `${connector.label} failed: ${reason}`, { cause: error }) };
  }
  const opened = await new Promise<boolean>((resolve) => {
    const stop = () => {
      socket.close();
      resolve(false);
    };
    signal.addEventListener('abort', stop, { once: true });
    socket.addEventListener('open', () => {
      signal.removeEventListener('abort', stop);
      resolve(true);
    });
    socket.addEventListener('close', () => {
      signal.removeEventListener('abort', stop);
      resolve(false);
    });
  });
  if (opened) return { socket };
  if (signal.aborted) return { failure: closedError(connector) };
  const problem = await connector.probe(signal).catch(() => undefined);
  return {
    failure:
      problem ??
      new ClientError('network', `${connector.label} failed: the WebSocket handshake did not complete`),
  };
}

export function closedError(connector: SocketConnector, cause?: Error): ClientError {
  return new ClientError('closed', `${connector.label} is closed`, cause === undefined ? {} : { cause });
}

/** Whether a failed connection may be tried again: the network, or a refusal that passes. */
export function retryable(opened: { readonly failure: Error; readonly final?: true }): boolean {
  if (opened.final === true) return false;
  const { failure } = opened;
  if (failure instanceof ProblemError) return retryStatuses.has(failure.status);
  return failure instanceof ClientError && failure.reason === 'network';
}

/** The wait before the `attempt`th reconnection: 250 ms doubling to 10 s, ±20 % so that clients spread. */
export function backoff(attempt: number): number {
  const wait = Math.min(10_000, 250 * 2 ** attempt);
  return Math.round(wait * (0.8 + Math.random() * 0.4));
}
