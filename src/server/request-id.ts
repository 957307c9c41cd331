/**
 * Request ids (docs/deployment.md, "Logs"): the `X-Request-Id` of answers and the `reqId` of log
 * lines, when the client sent none of its own.
 */
import { randomBytes } from 'node:crypto';
import { hex24 } from '../core/hex.js';

const bits24 = 0xffffff;

/** One Feistel round's mixing of a 24-bit half with a round key. */
function mix(half: number, key: number): number {
  let x = half ^ key;
  x = Math.imul(x ^ (x >>> 12), 0x45d9f3b);
  x = Math.imul(x ^ (x >>> 11), 0x2c1b3c6d);
  return (x ^ (x >>> 13)) & bits24;
}

/** The process's generator of ids: random keys drawn once, then a count. */
function idGenerator(): () => string {
  const random = randomBytes(28);
  const hex = random.toString('hex');
  const variant = (8 | ((random[15] as number) & 3)).toString(16);
  const prefix = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(12, 15)}-${variant}${hex.slice(15, 18)}-`;
  const [k0, k1, k2, k3] = [16, 19, 22, 25].map((at) => random.readUIntBE(at, 3)) as [
    number,
    number,
    number,
    number,
  ];
  // The count as two 24-bit halves: integer arithmetic only.
  let high = 0;
  let low = 0;
  return () => {
    low = (low + 1) & bits24;
    if (low === 0) high = (high + 1) & bits24;
    let left = high;
    let right = low;
    left ^= mix(right, k0);
    right ^= mix(left, k1);
    left ^= mix(right, k2);
    right ^= mix(left, k3);
    return prefix + hex24(left) + hex24(right);
  };
}

let next: (() => string) | undefined;

/**
 * A new request id, unique to this request: a UUID of version 8 ("custom", RFC 9562) made of a
 * random prefix drawn once per process and the process's request count, passed through a keyed
 * permutation of 48 bits (four Feistel rounds), so that ids neither repeat across instances nor
 * step visibly from one request to the next. The randomness is drawn at the first request, not
 * at import: Cloudflare Workers refuse random values in a module's global scope.
 */
export function newRequestId(): string {
  next ??= idGenerator();
  return next();
}
