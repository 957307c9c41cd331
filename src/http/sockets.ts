/**
 * A WebSocket procedure's open socket, the same on every runtime (docs/sockets.md): each frame
 * the client sends is checked (text, size, JSON, the `receive` schema) before the handler sees
 * it, and answered with an error frame when it fails; what the handler sends waits while the
 * client does not read; pings find clients that are gone; the app's shutdown closes every socket
 * with 1001. Each runtime's adapter only hands frames in and out through a {@link SocketPeer}.
 */
import { ProceedError } from '../core/errors.js';
import type { RequestLog } from '../core/request-context.js';
import type { SocketAnswer, SocketLimits } from '../core/sockets.js';
import { refusedKeyOf } from './json.js';
import { MessageQueue } from './message-queue.js';
import type { OpenSockets, SocketPlace } from './open-sockets.js';
import { problemAnswer } from './problems.js';
import { credentialsCloseCodes, watchCredentials } from './socket-credentials.js';

/** The close codes a session sends (RFC 6455, section 7.4.1). */
export const closeCodes = Object.freeze({
  normal: 1000,
  goingAway: 1001,
  policy: 1008,
  tooBig: 1009,
  internal: 1011,
  ...credentialsCloseCodes,
});

/** A runtime's open WebSocket, as the session drives it. */
export interface SocketPeer {
  send(text: string): void;
  /** Bytes handed to `send` and not yet written to the network. */
  buffered(): number;
  close(code: number, reason: string): void;
  /** Drops the connection at once: a client that stopped answering pings. */
  terminate(): void;
  /** Sends a ping; absent where the runtime keeps sockets alive itself (Deno's `idleTimeout`, Workers). */
  readonly ping: (() => void) | undefined;
  /** Whether the adapter calls {@link SocketSession.drained}; otherwise `buffered` is polled. */
  readonly tellsDrain: boolean;
}

/** What a session needs of its app. */
export interface SessionOptions {
  readonly exposeErrors: boolean;
  /** The handshake's request log: the socket's lines carry its `reqId`. */
  readonly log: Pick<RequestLog, 'info' | 'warn' | 'error'>;
  /** The procedure, as the request log and the metrics name it (`chat.joinRoom`). */
  readonly procedure: string;
  readonly sockets: OpenSockets;
  /** Whose socket it is, as the app's per-client limit counts: `user <id>` or `address <ip>`. */
  readonly client: string;
  /** Calls the listener when the app begins closing; returns its removal. */
  readonly onClosing: (listener: () => void) => () => void;
}

/** How long a socket closed by the server waits for the client's close frame before it is dropped. */
const closeWait = 5000;
/** How many times maxQueued one turn may queue: a single read of small frames, not a flood. */
const burstFactor = 16;
/**
 * A handler sending in a loop waits one turn of the event loop once it has held the process for
 * `turnSlice` ms, looked at every `sendsPerTurn` sends (a clock read per send would cost more).
 */
const sendsPerTurn = 64;
const turnSlice = 4;
/** One turn of the event loop: after its I/O, where the runtime has `setImmediate` (Workers may not). */
const nextTurn: (resolve: () => void) => void =
  typeof setImmediate === 'function'
    ? (resolve) => setImmediate(resolve)
    : (resolve) => setTimeout(resolve, 0);
/** How often a runtime that tells no drain is asked how much it still holds. */
const drainPoll = 10;

const utf8 = new TextEncoder();

/** A message's size in bytes of UTF-8, measured only when it could be over `limit`. */
function overLimit(text: string, limit: number): boolean {
  if (text.length * 3 <= limit) return false;
  if (text.length > limit) return true;
  return utf8.encode(text).byteLength > limit;
}

/**
 * One open socket of a WebSocket procedure. The adapter makes it once the handshake is accepted
 * and calls `open` with its peer, then `received`, `pong`, `drained` and `ended` as the runtime
 * tells it.
 */
export class SocketSession {
  readonly #answer: SocketAnswer;
  readonly #limits: SocketLimits;
  readonly #options: SessionOptions;
  readonly #messages = new MessageQueue();
  readonly #controller = new AbortController();
  #peer: SocketPeer | undefined;
  #invalid = 0;
  #answered = true;
  #pinger: ReturnType<typeof setInterval> | undefined;
  #drainWaiters: (() => void)[] = [];
  /** Sends since the handler last waited a turn of the event loop. */
  #sentInTurn = 0;
  /** When the handler last waited a turn (ms, `performance.now()`). */
  #turnStarted = 0;
  #drainTimer: ReturnType<typeof setInterval> | undefined;
  /** Stops watching the credentials that opened the socket. */
  #stopWatching: (() => void) | undefined;
  /** Whether more than maxQueued messages still wait once the handler had its turn. */
  #queueCheck: ReturnType<typeof setTimeout> | undefined;
  #stopClosing: (() => void) | undefined;
  #closing = false;
  #ended = false;
  /** The socket's place in the app's counts, taken when its handshake was accepted. */
  readonly #place: SocketPlace;
  #closeTimer: ReturnType<typeof setTimeout> | undefined;
  /** For the close line: when it opened, what went each way, who closed it and how. */
  #openedAt = 0;
  #receivedCount = 0;
  #sentCount = 0;
  #closedBy: 'server' | 'client' | 'lost' | undefined;
  #closeCode: number | undefined;
  #closeReason = '';

  constructor(answer: SocketAnswer, options: SessionOptions) {
    this.#answer = answer;
    this.#limits = answer.limits;
    this.#options = options;
    this.#place = options.sockets.take(options.client);
  }

  /** ms between pings (a runtime that pings itself is told). */
  get pingInterval(): number {
    return this.#limits.pingInterval;
  }

  /** The most bytes one frame may carry before the runtime drops the connection with 1009 unread. */
  static frameLimit(limits: SocketLimits): number {
    return Math.max(4 * limits.maxMessageSize, 64 * 1024);
  }

  /** The socket is open: the handler starts, pings begin, the app's shutdown will close it. */
  open(peer: SocketPeer): void {
    if (!this.#place.opened()) {
      // The handshake outlasted its place (docs/sockets.md, "Limits"): counted now, it could pass a cap.
      peer.close(closeCodes.tryAgain, 'the handshake took too long; open it again');
      this.ended();
      return;
    }
    this.#peer = peer;
    this.#openedAt = performance.now();
    this.#stopClosing = this.#options.onClosing(() =>
      this.close(closeCodes.goingAway, 'the server is shutting down'),
    );
    if (peer.ping !== undefined) {
      const ping = peer.ping;
      this.#pinger = setInterval(() => {
        // Neither a pong nor a message since the last ping, one interval ago: gone.
        if (!this.#answered) {
          this.#closedAs('server', 1006, 'no answer to pings');
          peer.terminate();
          this.ended();
          return;
        }
        this.#answered = false;
        ping();
      }, this.#limits.pingInterval);
      (this.#pinger as { unref?: () => void }).unref?.();
    }
    const { credentials, stillAllowed } = this.#answer;
    if (credentials !== undefined)
      this.#stopWatching = watchCredentials(
        credentials,
        this.#limits.credentialsCheck,
        { close: (code, reason) => this.close(code, reason), log: this.#options.log },
        stillAllowed,
      );
    const signal = this.#controller.signal;
    const fail = (error: unknown) => this.#fail(error);
    this.#answer
      .run({
        messages: this.#messages,
        send: (text) => this.#send(text),
        signal,
        fail,
        refuse: (error) => {
          if (!this.#closing) this.#refuse(error);
        },
      })
      .then(() => this.close(closeCodes.normal, ''), fail);
  }

  /** The handler failed: its problem as a last frame (a 500's reason only in the log), then the close. */
  #fail(error: unknown): void {
    if (this.#closing || this.#ended) return;
    const problem = this.#problemFrame(error);
    this.#peer?.send(problem.text);
    this.close(problem.status >= 500 ? closeCodes.internal : closeCodes.policy, problem.reason);
  }

  /** A frame from the client: checked, then handed to the handler, or answered with an error frame. */
  received(data: string | Uint8Array, binary: boolean): void {
    if (this.#closing) return;
    this.#answered = true;
    this.#receivedCount++;
    let message: unknown;
    try {
      if (binary || typeof data !== 'string')
        throw new ProceedError('UNSUPPORTED_MEDIA_TYPE', 'Messages are JSON text: binary frames are refused');
      if (overLimit(data, this.#limits.maxMessageSize))
        throw new ProceedError(
          'PAYLOAD_TOO_LARGE',
          `A message may hold at most ${this.#limits.maxMessageSize} bytes`,
        );
      let parsed: unknown;
      try {
        parsed = JSON.parse(data);
      } catch {
        throw new ProceedError('INVALID_JSON', 'The message is not valid JSON');
      }
      const refused = refusedKeyOf(data, parsed);
      if (refused !== undefined) throw refused;
      message = this.#answer.check(parsed);
    } catch (error) {
      this.#refuse(error);
      return;
    }
    // Frames that came in one read arrive in one turn, before the handler can take any: the
    // limit holds once the handler has had its turn (docs/sockets.md, "Limits"), and within one
    // turn at burstFactor times it, which bounds what a single read may queue.
    const { maxQueued } = this.#limits;
    if (this.#messages.length >= maxQueued * burstFactor) {
      this.#overrun();
      return;
    }
    this.#messages.push(message);
    if (this.#messages.length > maxQueued && this.#queueCheck === undefined)
      this.#queueCheck = setTimeout(() => {
        this.#queueCheck = undefined;
        if (this.#messages.length > maxQueued) this.#overrun();
      }, 0);
  }

  #overrun(): void {
    this.close(closeCodes.policy, 'messages arrive faster than they are handled');
  }

  /** The client answered a ping. */
  pong(): void {
    this.#answered = true;
  }

  /** The runtime wrote what it held: `send`s waiting for the client may go on. */
  drained(): void {
    if (this.#peer === undefined || this.#peer.buffered() > this.#limits.sendBuffer) return;
    const waiters = this.#drainWaiters;
    this.#drainWaiters = [];
    for (const wake of waiters) wake();
    if (this.#drainTimer !== undefined) {
      clearInterval(this.#drainTimer);
      this.#drainTimer = undefined;
    }
  }

  /** Closes the socket from the server's side; the client's close frame ends it. */
  close(code: number, reason: string): void {
    if (this.#closing || this.#ended) return;
    this.#closing = true;
    this.#closedAs('server', code, reason);
    const peer = this.#peer;
    try {
      peer?.close(code, reason);
    } catch (error) {
      // Workers refuse I/O on a socket from another request's turn (an app.close() from elsewhere).
      this.#options.log.warn({ err: error }, 'A WebSocket could not be closed');
    }
    this.#closeTimer = setTimeout(() => {
      peer?.terminate();
      this.ended();
    }, closeWait);
    (this.#closeTimer as { unref?: () => void }).unref?.();
    this.#stop();
    // The handler stops now: what it would send can no longer go.
    this.#controller.abort();
  }

  /**
   * The socket is closed, by either side (`code`: the close frame's, as the runtime tells it), or
   * its connection was lost (no code), or it never opened.
   */
  ended(code?: number): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#closing = true;
    this.#closedAs(code === undefined || code === 1006 ? 'lost' : 'client', code ?? 1006, '');
    if (this.#peer !== undefined) this.#logClosed();
    this.#place.release();
    if (this.#closeTimer !== undefined) clearTimeout(this.#closeTimer);
    this.#stop();
    this.#controller.abort();
  }

  /**
   * The runtime closed the connection itself (a frame over its limit, invalid UTF-8): the server
   * closed it, with that code, whatever the runtime then tells of the close.
   */
  closedByRuntime(code: number, reason: string): void {
    this.#closedAs('server', code, reason);
  }

  /** Who closed the socket first, and how; what came after does not change it. */
  #closedAs(by: 'server' | 'client' | 'lost', code: number, reason: string): void {
    if (this.#closedBy !== undefined) return;
    this.#closedBy = by;
    this.#closeCode = code;
    this.#closeReason = reason;
  }

  /** One line when an open socket ends, as a request has its line when answered (docs/sockets.md). */
  #logClosed(): void {
    this.#options.log.info(
      {
        procedure: this.#options.procedure,
        closedBy: this.#closedBy,
        code: this.#closeCode,
        ...(this.#closeReason === '' ? {} : { reason: this.#closeReason }),
        durationMs: Math.round(performance.now() - this.#openedAt),
        received: this.#receivedCount,
        sent: this.#sentCount,
      },
      'socket closed',
    );
  }

  /** Stops what drives the handler: its messages end, its waits on the client are let go. */
  #stop(): void {
    if (this.#pinger !== undefined) clearInterval(this.#pinger);
    this.#pinger = undefined;
    this.#stopClosing?.();
    this.#stopClosing = undefined;
    this.#messages.end();
    if (this.#drainTimer !== undefined) clearInterval(this.#drainTimer);
    this.#drainTimer = undefined;
    if (this.#queueCheck !== undefined) clearTimeout(this.#queueCheck);
    this.#queueCheck = undefined;
    this.#stopWatching?.();
    this.#stopWatching = undefined;
    const waiters = this.#drainWaiters;
    this.#drainWaiters = [];
    for (const wake of waiters) wake();
  }

  /** Sends one message; resolves once the client holds less than the send buffer. */
  #send(text: string): Promise<void> {
    const peer = this.#peer;
    // After the socket closed, the handler's signal has said so: nothing more is sent.
    // A handler that loops without looking at its signal must still let the process turn.
    if (peer === undefined || this.#closing) return new Promise(nextTurn);
    peer.send(text);
    this.#sentCount++;
    const buffered = peer.buffered();
    if (buffered <= this.#limits.sendBuffer) {
      // A handler that sends in a loop, to a client that reads as fast, would never let the
      // process turn to its other sockets and timers: every so many sends it waits one turn.
      if (++this.#sentInTurn < sendsPerTurn) return Promise.resolve();
      this.#sentInTurn = 0;
      const now = performance.now();
      if (now - this.#turnStarted < turnSlice) return Promise.resolve();
      this.#turnStarted = now;
      return new Promise(nextTurn);
    }
    // A handler that does not wait for `send` would fill the server's memory: past four
    // buffers the client is taken for one that does not read.
    if (buffered > 4 * this.#limits.sendBuffer) {
      this.close(closeCodes.policy, 'the client does not read its messages');
      return Promise.resolve();
    }
    if (!peer.tellsDrain && this.#drainTimer === undefined)
      this.#drainTimer = setInterval(() => this.drained(), drainPoll);
    return new Promise((resolve) => this.#drainWaiters.push(resolve));
  }

  /** An invalid message: an error frame, and the socket closed once the client sent too many. */
  #refuse(error: unknown): void {
    const problem = this.#problemFrame(error);
    this.#peer?.send(problem.text);
    this.#invalid++;
    if (this.#invalid >= this.#limits.invalidLimit)
      this.close(closeCodes.policy, `${this.#invalid} invalid messages`);
  }

  #problemFrame(error: unknown): { text: string; status: number; reason: string } {
    const { body, status } = problemAnswer(error, {
      exposeErrors: this.#options.exposeErrors,
      log: this.#options.log,
    });
    return {
      text: `{"type":"error","problem":${body}}`,
      status,
      reason: status >= 500 ? 'the handler failed' : 'the handler refused',
    };
  }
}
