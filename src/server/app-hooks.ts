/**
 * What plugins hook into an app (docs/plugins.md): the steps that run as it gets ready and as it
 * closes, the listeners told where it listens, and the observers told of every answer.
 */
import type { Logger } from 'pino';
import type { Answer } from '../http/observed.js';
import type { Listening } from './lifecycle.js';
import type { MaybePromise } from './options.js';

export class AppHooks {
  /** What runs as the app gets ready, in order; each leaves once it succeeded. */
  readonly #readyTasks: Array<() => MaybePromise<void>> = [];
  /** What runs as the app closes, in order: the framework's own steps. */
  readonly #closeTasks: Array<() => MaybePromise<void>> = [];
  /** The app's and plugins' `onClose` steps, run last registered first. */
  readonly #closers: Array<() => MaybePromise<void>> = [];
  readonly listeners: Array<(listening: Listening) => MaybePromise<void>> = [];
  readonly #observers: Array<(answer: Answer) => void> = [];
  readonly #log: Logger;

  constructor(log: Logger) {
    this.#log = log;
  }

  onReady(task: () => MaybePromise<void>): void {
    this.#readyTasks.push(task);
  }

  /** A closing step of the framework's own, run in order before the `onClose` ones. */
  onFrameworkClose(task: () => MaybePromise<void>): void {
    this.#closeTasks.push(task);
  }

  onClose(close: () => MaybePromise<void>): void {
    this.#closers.push(close);
  }

  /** Whether any observer was added: until one is, nothing is timed per request. */
  get observed(): boolean {
    return this.#observers.length > 0;
  }

  /** What starts watching answers once there is an observer (the adapter's per-request timing). */
  whenObserved: (() => void) | undefined;

  observe(listener: (answer: Answer) => void): void {
    if (this.#observers.length === 0) this.whenObserved?.();
    this.#observers.push(listener);
  }

  /** Each task leaves the list once it succeeded: a start-up that failed runs the rest again. */
  async runReadyTasks(): Promise<void> {
    while (this.#readyTasks.length > 0) {
      await this.#readyTasks[0]?.();
      this.#readyTasks.shift();
    }
  }

  /** The framework's closing steps, in order, once. */
  async runCloseTasks(): Promise<void> {
    for (const task of this.#closeTasks.splice(0)) await task();
  }

  /** The `onClose` steps, last registered first (one of the framework's closing steps). */
  async runClosers(): Promise<void> {
    for (const close of this.#closers.splice(0).reverse()) await close();
  }

  /** Tells every observer of one answer; one observer's mistake costs neither the others nor the request. */
  readonly tellObservers = (answer: Answer): void => {
    for (const observer of this.#observers) {
      try {
        observer(answer);
      } catch (error) {
        this.#log.error({ err: error }, 'An observer of answers failed');
      }
    }
  };
}
