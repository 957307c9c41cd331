/**
 * Hex digits of numbers on a request's path (request ids, entity tags), by table:
 * `Number#toString(16)` per id was a tenth of a small read's time on Bun, and a `BigInt`'s
 * `toString(16)` per tag more than the hash itself (docs/performance.md).
 */

/** '00' to 'ff', by byte. */
export const hexPairs: readonly string[] = Array.from({ length: 256 }, (_, byte) =>
  (byte + 0x100).toString(16).slice(1),
);

/** Six hex digits of a 24-bit number. */
export const hex24 = (value: number): string =>
  (hexPairs[value >>> 16] as string) + hexPairs[(value >>> 8) & 0xff] + hexPairs[value & 0xff];

/** Eight hex digits of a 32-bit number. */
const hex32 = (value: number): string =>
  (hexPairs[value >>> 24] as string) +
  hexPairs[(value >>> 16) & 0xff] +
  hexPairs[(value >>> 8) & 0xff] +
  hexPairs[value & 0xff];

const wide = new DataView(new ArrayBuffer(8));

/** Sixteen hex digits of a 64-bit hash, zero-padded. */
export function hex64(value: bigint): string {
  wide.setBigUint64(0, value);
  return hex32(wide.getUint32(0)) + hex32(wide.getUint32(4));
}
