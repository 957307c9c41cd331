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
import { isAddress } from './ip.js';
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

export type TrustProxy = boolean | number | string | string[];

/** The last of a header's comma-separated values: what the nearest proxy added. */
function lastEntry(value: string): string {
  const comma = value.lastIndexOf(',');
  return (comma === -1 ? value : value.slice(comma + 1)).trim();
}

/**
 * An address a proxy wrote with its port (`203.0.113.9:1000`, `[2001:db8::1]:443`, as Azure's
 * gateways do) as the address alone: the port changes per connection, and neither a rate limit's
 * key nor `ctx.request.ip` may change with it.
 */
function withoutPort(address: string): string {
  const v4 = /^(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}$/.exec(address);
  if (v4 !== null) return v4[1] as string;
  const v6 = /^\[([^\]]+)\](?::\d{1,5})?$/.exec(address);
  return v6 === null ? address : (v6[1] as string);
}

/**
 * What a trusted proxy says of a request (the same forms as Fastify's `trustProxy`: true (any), a
 * number of hops (the nearest that many proxies), a comma-separated string or a list of
 * addresses, subnets or `loopback` / `linklocal` / `uniquelocal`; both on `proxy-addr`): the
 * client's address from `X-Forwarded-For`, and the origin the client named from
 * `X-Forwarded-Proto` and `X-Forwarded-Host`.
 */
export class ProxyTrust {
  readonly #trusts: ((address: string, hop: number) => boolean) | undefined;

  constructor(trust: TrustProxy) {
    this.#trusts =
      trust === false
        ? undefined
        : trust === true
          ? () => true
          : typeof trust === 'number'
            ? (_address: string, hop: number) => hop < trust
            : proxyAddr.compile(
                typeof trust === 'string' ? trust.split(',').map((each) => each.trim()) : trust,
              );
  }

  /** The client's address; the peer's when no proxy is trusted. */
  clientAddress(peer: string, forwardedFor: string | null): string {
    const trusts = this.#trusts;
    if (trusts === undefined || forwardedFor === null) return peer;
    // Each hop without its port before the walk: proxy-addr takes `10.0.0.5:5555` for no address,
    // so a trusted proxy written with its port ended the walk at that proxy, for every client.
    const hops = forwardedFor.includes(':')
      ? forwardedFor
          .split(',')
          .map((hop) => withoutPort(hop.trim()))
          .join(', ')
      : forwardedFor;
    const request = { headers: { 'x-forwarded-for': hops }, connection: { remoteAddress: peer } };
    let found: string;
    try {
      found = proxyAddr(request as never, trusts);
    } catch {
      // An address the list cannot parse (an unknown peer, say) is no trusted proxy.
      return peer;
    }
    // What a trusted hop passed on that is no address (`<script>`, 3 KB of junk: a client that
    // reached the server past the proxy, writing the header itself) names no client: the peer
    // is the nearest address known, for the logs as for the rate limits.
    return found === peer || isAddress(found) ? found : peer;
  }

  /**
   * The origin the client named (the server's own, to the cross-site check): the request URL's,
   * or where the peer is a trusted proxy, its `X-Forwarded-Proto` and `X-Forwarded-Host` in
   * place of the scheme and host it saw.
   */
  origin(url: URL, peer: () => string, headers: { get(name: string): string | null }): string {
    const trusts = this.#trusts;
    if (trusts === undefined) return url.origin;
    const proto = headers.get('x-forwarded-proto');
    const host = headers.get('x-forwarded-host');
    if ((proto === null && host === null) || !this.#trustsPeer(trusts, peer())) return url.origin;
    const scheme = proto === null ? url.protocol.slice(0, -1) : lastEntry(proto);
    // As a browser writes `Origin`: lower case, no default port; a malformed value names nothing.
    try {
      return new URL(`${scheme}://${host === null ? url.host : lastEntry(host)}`).origin;
    } catch {
      return url.origin;
    }
  }

  #trustsPeer(trusts: (address: string, hop: number) => boolean, peer: string): boolean {
    try {
      return trusts(peer, 0);
    } catch {
      return false;
    }
  }
}
