/** The client's messages on an open WebSocket, as its handler reads them (src/http/sockets.ts). */

/** The client's messages, waiting for the handler: one reader, ended when the socket closes. */
export class MessageQueue implements AsyncIterable<unknown> {
  readonly #items: unknown[] = [];
  #ended = false;
  #wake: (() => void) | undefined;

  get length(): number {
    return this.#items.length;
  }

  push(item: unknown): void {
    this.#items.push(item);
    this.#wake?.();
  }

  end(): void {
    this.#ended = true;
    this.#items.length = 0;
    this.#wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<unknown, void, undefined> {
    while (true) {
      if (this.#items.length > 0) {
        yield this.#items.shift();
        continue;
      }
      if (this.#ended) return;
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
      });
      this.#wake = undefined;
    }
  }
}
