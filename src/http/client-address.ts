/**
 * The client's address on a Fetch runtime (docs/deployment.md, "Fetch runtimes"): a `Request`
 * does not carry its peer, so it comes from what the runtime passes beside the request — Bun's
 * server (`requestIP`), Deno's handler info (`remoteAddr`), `@hono/node-server`'s Node request
 * (`incoming`), `{ ip }` from any other host — or, on
 * Cloudflare Workers, from `CF-Connecting-IP`, which Cloudflare sets and a client cannot. With
 * `trustProxy`, `X-Forwarded-For` is read from the trusted proxies the same way Fastify reads it
 * on Node (both on `proxy-addr`).
 */
import proxyAddr from 'proxy-addr';
import { onWorkers } from './runtime.js';

/** What a runtime may pass as a fetch handler's second argument. */
interface RuntimeArgument {
  /** Bun's `Server`. */
  requestIP?: (request: Request) => { address: string } | null;
  /** Deno's `ServeHandlerInfo`. */
  remoteAddr?: { hostname?: string };
  /** Any other host that knows the peer. */
  ip?: unknown;
  /** `@hono/node-server`: the Node request. */
  incoming?: { socket?: { remoteAddress?: unknown } };
}

/** The peer's address as the runtime reports it, or '' when it does not. */
export function peerAddressOf(request: Request, runtime: unknown): string {
  if (typeof runtime === 'object' && runtime !== null) {
    const argument = runtime as RuntimeArgument;
    if (typeof argument.requestIP === 'function') return argument.requestIP(request)?.address ?? '';
    if (typeof argument.remoteAddr?.hostname === 'string') return argument.remoteAddr.hostname;
    if (typeof argument.ip === 'string') return argument.ip;
    const remote = argument.incoming?.socket?.remoteAddress;
    if (typeof remote === 'string') return remote;
  }
  if (onWorkers) return request.headers.get('cf-connecting-ip') ?? '';
  return '';
}

export type TrustProxy = boolean | string | string[];

/**
 * Resolves the client's address from the peer's; the identity when no proxy is trusted. The same
 * forms as Fastify's `trustProxy`: true (any), a comma-separated string or a list of addresses,
 * subnets or `loopback` / `linklocal` / `uniquelocal`.
 */
export function clientAddressResolver(
  trust: TrustProxy,
): (peer: string, forwardedFor: string | null) => string {
  if (trust === false) return (peer) => peer;
  const trusts =
    trust === true
      ? () => true
      : proxyAddr.compile(typeof trust === 'string' ? trust.split(',').map((each) => each.trim()) : trust);
  return (peer, forwardedFor) => {
    if (forwardedFor === null) return peer;
    const request = { headers: { 'x-forwarded-for': forwardedFor }, connection: { remoteAddress: peer } };
    try {
      return proxyAddr(request as never, trusts);
    } catch {
      // An address the list cannot parse (an unknown peer, say) is no trusted proxy.
      return peer;
    }
  };
}
