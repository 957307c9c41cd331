/**
 * Waits until `read()` stops changing from one `wait()` to the next (a producer gone idle, a
 * buffer full) and returns its value: tests wait on the quiet itself, not on a fixed sleep.
 */
export async function settled(read: () => number, wait: () => Promise<unknown>): Promise<number> {
  let before = -1;
  while (read() !== before) {
    before = read();
    await wait();
  }
  return before;
}
