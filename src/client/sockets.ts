/**
 * WebSocket procedures in the typed client (docs/sockets.md, "The typed client"): a socket that
 * sends typed messages, iterates the server's, and reconnects with a fresh token when the
 * connection drops or the server goes away (a rolling restart's 1001), until it is closed.
 */
import { ClientError, ProblemError } from './errors.js';
import { pause } from './events.js';
import {
  backoff,
  closedError,
  connect,
  isErrorFrame,
  retryable,
  type SocketConnector,
  type WebSocketLike,
} from './socket-connect.js';

export type { SocketConnector, WebSocketClass, WebSocketLike } from './socket-connect.js';

/** A socket procedure, called: typed both ways, and an async iterable of what the server sends. */
export interface ClientSocket<In, Out> extends AsyncIterable<Out> {
  /**
   * Sends one message, in order with every other. Resolves once it is handed to an open
   * connection whose send buffer is under 1 MiB; while the socket reconnects it waits, and goes
   * out after `onReconnect`'s listeners (and their promises) are done. Rejects once the socket is
   * closed for good.
   */
  send(message: In): Promise<void>;
  /** Closes the socket (1000) and ends the iteration; the same as the call's signal aborting. */
  close(): void;
  /**
   * Listens for the error frames that leave the socket open: a message the server refused (not
   * the schema's, too long, refused by the handler). Returns a function that stops listening.
   */
  onProblem(listener: (problem: ProblemError) => void): () => void;
  /**
   * Listens for each reconnection: the server side starts again from nothing, so send what it
   * must know again (subscriptions); what the listener sends, until its promise settles, goes
   * ahead of the messages waiting to be sent. Returns a function that stops listening.
   */
  onReconnect(listener: () => unknown): () => void;
  /** `open`, `reconnecting` (the connection dropped and is being made again) or `closed`. */
  readonly state: 'open' | 'reconnecting' | 'closed';
}

const open = 1;
/** Messages received and not yet iterated; past this the client is not reading and the socket is closed. */
const maxUnread = 10_000;
/** Bytes handed to the connection and not yet sent before `send` waits. */
const sendBuffer = 1024 * 1024;
/**
 * Close codes after which the same socket is opened again: the server went away, the network
 * dropped, or the token that opened it lapsed (4401: the next handshake asks for a fresh one, and
 * a token that no longer holds is refused there, which ends the socket).
 */
const reconnectCodes = new Set([1001, 1005, 1006, 1012, 1013, 1014, 4401]);
/** An app's listener threw: reported as the platform reports an event listener's error, the socket unharmed. */
function report(error: unknown): void {
  const global = globalThis as { reportError?: (error: unknown) => void };
  if (typeof global.reportError === 'function') global.reportError(error);
  else console.error(error);
}

interface Reader<Out> {
  resolve(result: IteratorResult<Out>): void;
  reject(error: unknown): void;
}

interface Outgoing {
  readonly text: string;
  resolve(): void;
  reject(error: unknown): void;
}

class ReconnectingSocket<In, Out> implements ClientSocket<In, Out> {
  readonly #connector: SocketConnector;
  readonly #closing = new AbortController();
  /** The connection whose messages count: the last one that opened. */
  #socket: WebSocketLike | undefined;
  #state: 'open' | 'reconnecting' | 'closed' = 'reconnecting';
  readonly #unread: Out[] = [];
  /** `next()` calls waiting for a message, in the order they were made. */
  readonly #readers: Reader<Out>[] = [];
  /** Why the socket ended, once it has: an error the iteration throws, or null for a quiet end. */
  #ending: Error | null | undefined;
  /** The error the socket ended with, kept after the iteration threw it: the cause of a later send's. */
  #endedWith: Error | undefined;
  /** The error frame that came last, if no message came after it: why a close that follows it happened. */
  #lastProblem: ProblemError | undefined;
  readonly #problemListeners = new Set<(problem: ProblemError) => void>();
  readonly #reconnectListeners = new Set<() => unknown>();
  /** Messages to send, in order: one loop sends them, so that none overtakes another. */
  readonly #outbox: Outgoing[] = [];
  #pumping = false;
  /** While `onReconnect`'s listeners run, what they send goes first, ahead of the outbox. */
  #replaying = false;
  /** The send loop waiting for an open connection. */
  readonly #waiting = new Set<() => void>();

  constructor(connector: SocketConnector, signal: AbortSignal | undefined) {
    this.#connector = connector;
    if (signal !== undefined) {
      const stop = () => this.close();
      if (signal.aborted) stop();
      else signal.addEventListener('abort', stop, { once: true });
      this.#closing.signal.addEventListener('abort', () => signal.removeEventListener('abort', stop), {
        once: true,
      });
    }
  }

  /** The first connection: rejects as a call does when the route refuses it or the network fails. */
  async open(): Promise<void> {
    const opened = await connect(this.#connector, this.#closing.signal, (socket) => this.#attach(socket));
    // Closed while it connected (the call's signal, `close()`): the connection is not kept.
    if (this.#closing.signal.aborted) {
      if ('socket' in opened) opened.socket.close(1000);
      throw 'failure' in opened ? opened.failure : closedError(this.#connector);
    }
    if ('failure' in opened) {
      this.#end(null);
      throw opened.failure;
    }
    this.#state = 'open';
  }

  get state(): 'open' | 'reconnecting' | 'closed' {
    return this.#state;
  }

  send(message: In): Promise<void> {
    if (this.#state === 'closed') return Promise.reject(closedError(this.#connector, this.#endedWith));
    const text = JSON.stringify(message);
    const socket = this.#socket;
    if (this.#replaying && this.#state === 'open' && socket?.readyState === open) {
      socket.send(text);
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      this.#outbox.push({ text, resolve, reject });
      void this.#pump();
    });
  }

  close(): void {
    if (this.#state === 'closed') return;
    this.#socket?.close(1000);
    this.#end(null);
  }

  onProblem(listener: (problem: ProblemError) => void): () => void {
    this.#problemListeners.add(listener);
    return () => this.#problemListeners.delete(listener);
  }

  onReconnect(listener: () => unknown): () => void {
    this.#reconnectListeners.add(listener);
    return () => this.#reconnectListeners.delete(listener);
  }

  [Symbol.asyncIterator](): AsyncIterator<Out> {
    return {
      next: () => {
        const message = this.#unread.shift();
        if (message !== undefined) return Promise.resolve({ done: false, value: message });
        if (this.#ending === null) return Promise.resolve({ done: true, value: undefined });
        if (this.#ending !== undefined) {
          const ending = this.#ending;
          // Thrown once: after it, the iteration is simply over.
          this.#ending = null;
          return Promise.reject(ending);
        }
        return new Promise((resolve, reject) => {
          this.#readers.push({ resolve, reject });
        });
      },
      // Leaving a `for await` early closes the socket, as with an event stream.
      return: () => {
        this.close();
        return Promise.resolve({ done: true, value: undefined });
      },
    };
  }

  /** Sends the outbox in order, each once a connection is open with room in its buffer. */
  async #pump(): Promise<void> {
    if (this.#pumping) return;
    this.#pumping = true;
    try {
      while (this.#outbox.length > 0) {
        if (this.#state === 'closed') {
          const ending = closedError(this.#connector, this.#endedWith);
          for (const outgoing of this.#outbox.splice(0)) outgoing.reject(ending);
          return;
        }
        const socket = this.#socket;
        if (this.#state === 'open' && !this.#replaying && socket?.readyState === open) {
          if (socket.bufferedAmount < sendBuffer) {
            const outgoing = this.#outbox.shift() as Outgoing;
            socket.send(outgoing.text);
            outgoing.resolve();
          } else {
            // Browsers tell no drain: look again shortly.
            await pause(10, this.#closing.signal);
          }
          continue;
        }
        await new Promise<void>((resolve) => this.#waiting.add(resolve));
      }
    } finally {
      this.#pumping = false;
    }
  }

  #attach(socket: WebSocketLike): void {
    // A close always follows an error, and says what is known; `ws` throws an error nobody listens to.
    socket.addEventListener('error', () => undefined);
    socket.addEventListener('open', () => {
      if (this.#state !== 'closed') this.#socket = socket;
    });
    socket.addEventListener('message', (event: { data: unknown }) => {
      if (socket !== this.#socket || this.#state === 'closed') return;
      this.#receive(event.data);
    });
    // A connection that drops before it is taken for open is the reconnect loop's to retry.
    socket.addEventListener('close', (event: { code: number; reason: string }) => {
      if (socket !== this.#socket || this.#state !== 'open') return;
      this.#closed(event.code, event.reason);
    });
  }

  #receive(data: unknown): void {
    let message: unknown;
    try {
      message = JSON.parse(typeof data === 'string' ? data : String(data));
    } catch (error) {
      this.#fail(
        new ClientError('invalid-response', `${this.#connector.label}: a message is not JSON`, {
          cause: error,
        }),
      );
      return;
    }
    if (isErrorFrame(message)) {
      const problem = new ProblemError(message.problem);
      this.#lastProblem = problem;
      for (const listener of this.#problemListeners) {
        try {
          listener(problem);
        } catch (error) {
          report(error);
        }
      }
      return;
    }
    this.#lastProblem = undefined;
    const reader = this.#readers.shift();
    if (reader !== undefined) {
      reader.resolve({ done: false, value: message as Out });
      return;
    }
    if (this.#unread.length >= maxUnread) {
      this.#fail(
        new ClientError(
          'closed',
          `${this.#connector.label}: ${maxUnread} messages arrived that nothing iterated`,
        ),
      );
      return;
    }
    this.#unread.push(message as Out);
  }

  #closed(code: number, reason: string): void {
    if (code === 1000) {
      this.#end(null);
      return;
    }
    if (reconnectCodes.has(code)) {
      void this.#reconnect();
      return;
    }
    // A limit or the handler's failure: the error frame sent just before says why.
    this.#end(
      this.#lastProblem ??
        new ClientError(
          'closed',
          `${this.#connector.label} closed with ${code}${reason === '' ? '' : `: ${reason}`}`,
        ),
    );
  }

  async #reconnect(): Promise<void> {
    this.#state = 'reconnecting';
    this.#lastProblem = undefined;
    for (let attempt = 0; ; attempt++) {
      await pause(backoff(attempt), this.#closing.signal);
      // Closed meanwhile (`close()`, the signal): the closing signal is aborted by then.
      if (this.#closing.signal.aborted) return;
      const opened = await connect(this.#connector, this.#closing.signal, (socket) => this.#attach(socket));
      if (this.#closing.signal.aborted) {
        if ('socket' in opened) opened.socket.close(1000);
        return;
      }
      if ('socket' in opened && opened.socket.readyState === open) {
        this.#state = 'open';
        await this.#replay();
        this.#wake();
        return;
      }
      if ('failure' in opened && !retryable(opened)) {
        this.#end(opened.failure);
        return;
      }
    }
  }

  /** Runs `onReconnect`'s listeners, their promises awaited: what they send goes out first. */
  async #replay(): Promise<void> {
    this.#replaying = true;
    try {
      const running = [...this.#reconnectListeners].map((listener) => {
        try {
          return Promise.resolve(listener());
        } catch (error) {
          return Promise.reject(error);
        }
      });
      for (const settled of await Promise.allSettled(running))
        if (settled.status === 'rejected') report(settled.reason);
    } finally {
      this.#replaying = false;
    }
  }

  #fail(error: Error): void {
    this.#socket?.close(1000);
    this.#end(error);
  }

  #end(ending: Error | null): void {
    if (this.#state === 'closed') return;
    this.#state = 'closed';
    if (ending !== null) this.#endedWith = ending;
    this.#closing.abort();
    this.#wake();
    const readers = this.#readers.splice(0);
    if (readers.length === 0) {
      this.#ending = ending;
      return;
    }
    this.#ending = null;
    // The first reader learns why; any other is simply done.
    readers.forEach((reader, index) => {
      if (index === 0 && ending !== null) reader.reject(ending);
      else reader.resolve({ done: true, value: undefined });
    });
  }

  #wake(): void {
    const waiting = [...this.#waiting];
    this.#waiting.clear();
    for (const resolve of waiting) resolve();
  }
}

/**
 * Opens a socket procedure's socket: resolves once the first handshake is accepted, rejects with
 * the route's problem (401, 403, 400, 429) or a network failure, as any call does.
 */
export async function openSocket<In, Out>(
  connector: SocketConnector,
  signal: AbortSignal | undefined,
): Promise<ClientSocket<In, Out>> {
  const socket = new ReconnectingSocket<In, Out>(connector, signal);
  await socket.open();
  return socket;
}
