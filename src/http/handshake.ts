/**
 * A WebSocket handshake as the pipeline checks it (docs/sockets.md), before any runtime upgrades:
 * whether a request asks for one, and what is wrong with one a WebSocket server would refuse.
 */

/** Whether an `Upgrade` header asks for a WebSocket (its handshake's other checks: {@link handshakeRefusal}). */
export const asksForWebSocket = (upgrade: string | undefined): boolean =>
  upgrade !== undefined && /\bwebsocket\b/i.test(upgrade);

/** A handshake's key: 16 random bytes in base64 (RFC 6455, section 4.1). */
const handshakeKey = /^[+/0-9A-Za-z]{22}==$/;
/** An HTTP token (RFC 9110, section 5.6.2): a subprotocol's name. */
const token = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * What is wrong with a WebSocket handshake, in words for its 400, or undefined: the checks every
 * runtime's WebSocket server makes (`ws` on Node answers them with an HTML page of its own), made
 * here once, before the route upgrades, so that the refusal is a problem and is logged as one.
 */
export function handshakeRefusal(
  header: (name: string) => string | undefined,
  connectionsSeen: boolean,
): string | undefined {
  const upgrade = header('upgrade') ?? '';
  if (upgrade.trim().toLowerCase() !== 'websocket')
    return `A WebSocket handshake upgrades to websocket alone, not ${JSON.stringify(upgrade)}`;
  // RFC 6455, section 4.2.1; where the edge owns the connection (Workers) it hands over none.
  if (connectionsSeen && !/\bupgrade\b/i.test(header('connection') ?? ''))
    return 'A WebSocket handshake says Connection: Upgrade';
  const version = header('sec-websocket-version');
  const key = header('sec-websocket-key');
  const protocols = header('sec-websocket-protocol');
  if (version?.trim() !== '13' || key === undefined)
    return 'A WebSocket handshake needs Sec-WebSocket-Key and Sec-WebSocket-Version: 13';
  if (!handshakeKey.test(key.trim())) return 'Sec-WebSocket-Key is not 16 bytes in base64, as RFC 6455 asks';
  if (protocols === undefined) return undefined;
  const names = protocols.split(',').map((name) => name.trim());
  if (names.some((name) => !token.test(name)) || new Set(names).size !== names.length)
    return 'Sec-WebSocket-Protocol is not a list of distinct subprotocol names';
  return undefined;
}

/** Answers that stand for a handshake the runtime completed itself (Bun's): never sent. */
const completedHandshakes = new WeakSet<Response>();

/**
 * What a runtime that answers a WebSocket handshake itself hands back in place of its 101 (a
 * Response cannot hold that status): counted, logged and traced as the 101 it was.
 */
export function completedHandshake(): Response {
  const answer = new Response(null);
  completedHandshakes.add(answer);
  return answer;
}

/** The status an answer was sent with: 101 for a handshake the runtime completed itself. */
export function sentStatus(answer: Response): number {
  return completedHandshakes.has(answer) ? 101 : answer.status;
}
