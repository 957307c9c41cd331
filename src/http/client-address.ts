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
import { runtime } from './runtime.js';
import type { PipelineRequest } from './sent.js';

/**
 * The peer's address: `{ ip }` given by the host beside the request, else what the runtime
 * passes there or its platform sets (src/http/runtimes/), else '' when nothing says.
 */
export function peerAddressOf(request: PipelineRequest, argument: unknown): string {
  const given = typeof argument === 'object' && argument !== null ? argument : undefined;
  const ip = (given as { ip?: unknown } | undefined)?.ip;
  if (typeof ip === 'string') return ip;
  return runtime.peerAddress(request, given) ?? '';
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
