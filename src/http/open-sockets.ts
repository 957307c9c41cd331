/** How many WebSockets an app holds open, against its `maxSockets` (docs/sockets.md, "Limits"). */
/** The sockets open on one app: their count against its limit, and their shutdown. */
export class OpenSockets {
  /** Set once from the app's `maxSockets` (docs/sockets.md, "Limits"). */
  max: number;
  #open = 0;

  constructor(max: number) {
    this.max = max;
  }

  get open(): number {
    return this.#open;
  }

  /** Whether one more may open: refused with 503 before the upgrade otherwise. */
  get full(): boolean {
    return this.#open >= this.max;
  }

  opened(): void {
    this.#open++;
  }

  closed(): void {
    this.#open--;
  }
}
