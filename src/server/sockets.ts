/**
 * WebSockets on Node's http server (docs/sockets.md), with `ws`. A handshake is served as any
 * request first: Node hands it to the `upgrade` event, which passes it on to the app's routes
 * with a response written on its connection, so a guard's 401 or a rate limit's 429 is an
 * ordinary HTTP answer. Only a socket procedure's accepted answer completes the handshake; the
 * session (src/http/sockets.ts) drives the socket from then on.
 */
import { type IncomingMessage, type Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { WebSocket, WebSocketServer } from 'ws';
import { asksForWebSocket } from '../http/handshake.js';
import type { HeaderValues } from '../http/procedure-answer.js';
import type { SocketPeer, SocketSession } from '../http/sockets.js';
import type { Lifecycle } from './lifecycle.js';

interface HeldUpgrade {
  readonly socket: Duplex;
  readonly head: Buffer;
  readonly response: ServerResponse;
}

const heldUpgrades = new WeakMap<IncomingMessage, HeldUpgrade>();
/** The lines the app adds to a `101` (its request id, the handler's cookies). */
const extraHeaders = new WeakMap<IncomingMessage, readonly string[]>();

type WsModule = typeof import('ws');
/** `ws`, loaded only by an app with a socket procedure: 90 ms of a cold start otherwise. */
let wsModule: WsModule | undefined;
let loadingWs: Promise<WsModule> | undefined;
const loadWs = (): Promise<WsModule> => {
  loadingWs ??= import('ws').then((loaded) => {
    wsModule = loaded;
    return loaded;
  });
  return loadingWs;
};

/**
 * Serves the server's upgrade requests through its routes. A route that answers anything but a
 * socket writes its answer on the connection, which then ends. A request still being answered
 * on the connection (the client pipelined this one behind it) is answered first.
 */
export function routeUpgrades(server: Server, lifecycle: Lifecycle): void {
  void loadWs();
  server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    // Node took its own listener off: a client that resets while the upgrade waits must not throw.
    socket.on('error', () => socket.destroy());
    const pending = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
    if (pending === null || pending === undefined) takeUpgrade(server, lifecycle, request, socket, head);
    else
      pending.once('finish', () =>
        // After Node's own handling of that answer's end, which may set a keep-alive timeout.
        setImmediate(() => {
          (socket as Socket).setTimeout(0);
          takeUpgrade(server, lifecycle, request, socket, head);
        }),
      );
  });
}

function takeUpgrade(
  server: Server,
  lifecycle: Lifecycle,
  request: IncomingMessage,
  socket: Duplex,
  head: Buffer,
): void {
  if (socket.destroyed) return;
  // No handshake but a GET asking for a WebSocket: any other is the plain request it also is.
  if (request.method !== 'GET' || !asksForWebSocket(request.headers.upgrade)) {
    reparse(lifecycle, request, socket as Socket, head);
    return;
  }
  const response = new ServerResponse(request);
  response.shouldKeepAlive = false;
  response.assignSocket(socket as Socket);
  response.once('finish', () => socket.end());
  heldUpgrades.set(request, { socket, head, response });
  server.emit('request', request, response);
}

/** What a request's `Connection` lists only for an upgrade: dropped with it. */
const upgradeOnly = new Set(['upgrade', 'http2-settings']);

/**
 * An upgrade to anything but a WebSocket (`h2c`, which `curl --http2` asks for) served as the
 * plain request it also is, as HTTP lets a server ignore an upgrade it does not take: Node stopped
 * reading at its head, leaving its body unread, so the head is written again without the upgrade,
 * in front of what came after it, and the connection handed to Node's HTTP parsing anew.
 */
function reparse(lifecycle: Lifecycle, request: IncomingMessage, socket: Socket, rest: Buffer): void {
  let head = `${request.method ?? 'GET'} ${request.url ?? '/'} HTTP/${request.httpVersion}\r\n`;
  const raw = request.rawHeaders;
  for (let at = 0; at < raw.length; at += 2) {
    const name = raw[at] as string;
    const value = raw[at + 1] as string;
    const lower = name.toLowerCase();
    if (upgradeOnly.has(lower)) continue;
    if (lower === 'connection') {
      const kept = value
        .split(',')
        .map((token) => token.trim())
        .filter((token) => token !== '' && !upgradeOnly.has(token.toLowerCase()));
      if (kept.length > 0) head += `${name}: ${kept.join(', ')}\r\n`;
      continue;
    }
    head += `${name}: ${value}\r\n`;
  }
  socket.unshift(Buffer.concat([Buffer.from(`${head}\r\n`, 'latin1'), rest]));
  lifecycle.serveAgain(socket);
}

/** One `ws` server per frame limit: what `ws` reads of a frame before it closes with 1009. */
const servers = new Map<number, WebSocketServer>();

function serverFor(ws: WsModule, frameLimit: number): WebSocketServer {
  let server = servers.get(frameLimit);
  if (server === undefined) {
    server = new ws.WebSocketServer({
      noServer: true,
      maxPayload: frameLimit,
      perMessageDeflate: false,
      clientTracking: false,
    });
    server.on('headers', (lines: string[], request: IncomingMessage) => {
      lines.push(...(extraHeaders.get(request) ?? []));
    });
    servers.set(frameLimit, server);
  }
  return server;
}

/** Whether this request came through the `upgrade` event: it can become a socket. */
export function isHeldUpgrade(request: IncomingMessage): boolean {
  return heldUpgrades.has(request);
}

/**
 * Completes the handshake of a held upgrade and gives the socket to its session. `upgraded` is
 * called with the connection once it is no longer an HTTP one.
 */
export function openSocket(
  request: IncomingMessage,
  session: SocketSession,
  frameLimit: number,
  answer: { headers: HeaderValues; cookies: readonly string[] },
  upgraded: (connection: Duplex) => void,
): void {
  const held = heldUpgrades.get(request);
  if (held === undefined) throw new Error('openSocket: the request did not come through the upgrade event');
  heldUpgrades.delete(request);
  const lines: string[] = [];
  for (const [name, value] of Object.entries(answer.headers)) lines.push(`${name}: ${value}`);
  for (const cookie of answer.cookies) lines.push(`set-cookie: ${cookie}`);
  extraHeaders.set(request, lines);
  // The connection is the socket's now: the response that stood for it is done, as the 101 ws
  // writes (what the request line and metrics say of it).
  held.response.statusCode = 101;
  held.response.detachSocket(held.socket as Socket);
  held.response.emit('close');
  const upgrade = (module: WsModule) =>
    serverFor(module, frameLimit).handleUpgrade(request, held.socket, held.head, (ws: WebSocket) => {
      upgraded(held.socket);
      attach(ws, held.socket as Socket, session);
    });
  if (wsModule !== undefined) upgrade(wsModule);
  else
    loadWs().then(upgrade, () => {
      held.socket.destroy();
      session.ended();
    });
}

/**
 * Hands an open socket's events to its session. Its listeners live as long as the socket: made
 * here, they hold the socket and the session only, not the handshake's request and response
 * (a closure keeps every variable of the scope it is made in: 2 KiB a socket).
 */
function attach(ws: WebSocket, connection: Socket, session: SocketSession): void {
  session.open(wsPeer(ws, connection));
  ws.on('message', (data: Buffer, binary: boolean) =>
    session.received(binary ? new Uint8Array(data) : data.toString('utf8'), binary),
  );
  ws.on('pong', () => session.pong());
  ws.on('close', (code: number) => session.ended(code));
  // Invalid UTF-8, a frame over the limit, a broken frame: ws closes the connection itself, stops
  // reading and emits close with 1006; the session is told that the server closed it, and why.
  ws.on('error', (error: Error & { code?: string }) => {
    const closed = wsClosings[error.code ?? ''] ?? { code: 1002, reason: 'the frame broke the protocol' };
    session.closedByRuntime(closed.code, closed.reason);
  });
}

/** Why `ws` closed a connection itself, by its error's code, as the close line says it. */
const wsClosings: Readonly<Record<string, { code: number; reason: string }>> = {
  WS_ERR_UNSUPPORTED_MESSAGE_LENGTH: { code: 1009, reason: 'a frame over the size limit' },
  WS_ERR_INVALID_UTF8: { code: 1007, reason: 'a text frame that is not UTF-8' },
};

/**
 * What a handler sends in one turn of the event loop leaves in one write: the connection is
 * corked at the first send and uncorked after the turn's I/O, as Bun's own server does inside
 * its callbacks (a system call per message otherwise: docs/performance.md, "WebSockets").
 */
function wsPeer(ws: WebSocket, connection: Socket): SocketPeer {
  let corked = false;
  const uncork = () => {
    corked = false;
    connection.uncork();
  };
  return {
    send: (text) => {
      if (!corked) {
        corked = true;
        connection.cork();
        setImmediate(uncork);
      }
      ws.send(text);
    },
    buffered: () => ws.bufferedAmount,
    close: (code, reason) => ws.close(code, reason),
    terminate: () => ws.terminate(),
    ping: () => ws.ping(),
    tellsDrain: false,
  };
}
