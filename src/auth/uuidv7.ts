/** Token ids: UUIDv7s, which date the token to the millisecond and sort in the order made. */
import { randomBytes } from 'node:crypto';

/** The millisecond and the 12-bit counter of the last UUIDv7 made without a given time. */
let lastMillisecond = 0;
let counter = 0;

/**
 * A UUIDv7 (RFC 9562): 48 bits of ms timestamp, a 12-bit counter, then randomness. Sortable, and
 * it dates the token. Ids made in order sort in order, within a millisecond too: the counter
 * starts at a random value below 2,048 each millisecond and counts up; past 4,095 the next
 * millisecond is borrowed, and a clock stepped back keeps counting from the last one (RFC 9562,
 * §6.2, method 1). `uuidv7(now)` takes the given millisecond as it is, with a random counter.
 *
 * @example
 * const ids = [uuidv7(), uuidv7()]; // ids[0] < ids[1]
 */
export function uuidv7(now?: number): string {
  const bytes = randomBytes(16);
  let millisecond: number;
  let count: number;
  if (now !== undefined) {
    millisecond = now;
    count = bytes.readUInt16BE(6) & 0x0fff;
  } else {
    const clock = Date.now();
    if (clock > lastMillisecond) {
      lastMillisecond = clock;
      counter = bytes.readUInt16BE(6) & 0x07ff;
    } else if (++counter > 0x0fff) {
      lastMillisecond += 1;
      counter = 0;
    }
    millisecond = lastMillisecond;
    count = counter;
  }
  bytes.writeUIntBE(millisecond, 0, 6);
  bytes[6] = 0x70 | (count >> 8);
  bytes[7] = count & 0xff;
  bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
