/**
 * `proceed start --workers N`: this process is the cluster's primary. It serves nothing itself;
 * it starts N worker processes (worker.ts) that load the app and listen on one shared port,
 * replaces a worker that dies (waiting longer after each failure in a row), and on SIGTERM or
 * SIGINT passes the signal on, so that every worker drains, and exits 0 once they are gone.
 *
 * The first worker starts alone: an app that cannot start (a bad setting, a refusal to run in
 * several processes) fails once, with its own message, and the primary exits 1 instead of
 * restarting it forever.
 */
import cluster, { type Address, type Worker } from 'node:cluster';
import type { Logger } from 'pino';
import { serverSettingsFromEnv } from '../config/server.js';
import { createLogger } from '../server/logger.js';
import { repeatWindowMs } from './signals.js';
import { isTypeScript, sibling, typescriptLoaderArgs } from './typescript.js';

export interface WorkersOptions {
  /** The entry's absolute path. */
  entry: string;
  port: number;
  host: string;
  count: number;
  /** Where tsx is looked for first (a TypeScript entry). */
  cwd: string;
  log?: Logger;
}

/** The wait before replacing a worker: 0.5 s after a first failure, doubling, at most 30 s. */
export function restartDelay(failuresInARow: number): number {
  return Math.min(30_000, 500 * 2 ** Math.max(0, failuresInARow - 1));
}

/** A worker that served this long before dying starts its slot's failure count again. */
const stableAfterMs = 30_000;

/**
 * How long a stop may take after the drain delay: workers still running this long after the
 * signal (an `onClose` step that never returns) are killed, and the exit code is 1. Each worker's
 * own shutdown bounds its requests in flight by the app's `shutdownTimeout` (10 s by default)
 * well before this.
 */
export const stopDeadlineMs = 30_000;

/**
 * The deadline with the drain delay the workers read from the environment (`SHUTDOWN_DRAIN_MS`,
 * else 5 s in production): a long drain must not get workers killed with requests in flight.
 */
export function stopDeadline(env: NodeJS.ProcessEnv = process.env): number {
  let drain = 0;
  try {
    drain = serverSettingsFromEnv(env).drainDelay;
  } catch {
    // A bad value stops each worker at start-up with its own message; nothing to add here.
  }
  return stopDeadlineMs + drain;
}

interface Slot {
  index: number;
  worker: Worker | undefined;
  failures: number;
  listeningSince: number | undefined;
  restart: NodeJS.Timeout | undefined;
}

function urlOf(address: Address): string {
  const host = address.address?.includes(':') ? `[${address.address}]` : (address.address ?? 'localhost');
  return `http://${host}:${address.port}`;
}

function howItEnded(code: number | null, signal: string | null): string {
  return signal === null ? `exited with code ${code}` : `was killed by ${signal}`;
}

/**
 * Runs the cluster until it is stopped by a signal, and resolves to the exit code: 0 when every
 * worker stopped cleanly, 1 when the first worker could not start or a worker failed to stop.
 *
 * @example
 * process.exitCode = await runWorkers({ entry, port: 3030, host: '127.0.0.1', count: 2, cwd });
 */
export function runWorkers(options: WorkersOptions): Promise<number> {
  const { entry, port, host, count, cwd } = options;
  const log = options.log ?? createLogger();
  cluster.setupPrimary({
    exec: sibling('worker'),
    args: [entry, String(port), host, String(count)],
    execArgv: [...process.execArgv, ...(isTypeScript(entry) ? typescriptLoaderArgs(cwd, entry) : [])],
  });

  const slots: Slot[] = Array.from({ length: count }, (_, index) => ({
    index: index + 1,
    worker: undefined,
    failures: 0,
    listeningSince: undefined,
    restart: undefined,
  }));
  let stopping: { at: number } | undefined;
  let failedToStop = false;
  let serving = false;
  /** Slots that have listened at least once; the cluster is announced when all have. */
  const listenedOnce = new Set<number>();

  return new Promise<number>((resolve) => {
    const finishIfStopped = () => {
      if (stopping !== undefined && slots.every((slot) => slot.worker === undefined)) {
        for (const signal of ['SIGTERM', 'SIGINT'] as const) process.off(signal, stop);
        log.info('every worker has stopped');
        resolve(failedToStop ? 1 : 0);
      }
    };

    const start = (slot: Slot) => {
      slot.restart = undefined;
      if (stopping !== undefined) return;
      // Its number, and how many serve: what cannot be shared across them is refused (the auth
      // plugin's store in memory, docs/auth.md).
      const worker = cluster.fork({ PROCEED_WORKER: String(slot.index), PROCEED_WORKERS: String(count) });
      slot.worker = worker;
      slot.listeningSince = undefined;
      worker.once('listening', (address) => {
        slot.listeningSince = Date.now();
        if (slot.index === 1 && !serving) {
          serving = true;
          for (const other of slots.slice(1)) start(other);
        }
        if (listenedOnce.size < count && !listenedOnce.has(slot.index)) {
          listenedOnce.add(slot.index);
          if (listenedOnce.size === count) {
            log.info(`${count} ${count === 1 ? 'worker' : 'workers'} serving ${urlOf(address)}`);
          }
        }
      });
      worker.once('exit', (code, signal) => ended(slot, worker, code, signal));
      // A connection handed to a worker that has just died, a fork the system refuses: reported
      // on the worker, and fatal to this process without a listener. 'exit' does the rest.
      worker.on('error', (error) =>
        log.warn({ err: error, worker: slot.index }, `worker ${slot.index}: ${error.message}`),
      );
    };

    const ended = (slot: Slot, worker: Worker, code: number | null, signal: string | null) => {
      if (slot.worker === worker) slot.worker = undefined;
      const pid = worker.process.pid;
      if (stopping !== undefined) {
        // A worker stopped before its handlers were in place dies by the signal: that is a stop too.
        if (code !== null && code !== 0) {
          failedToStop = true;
          log.error(
            { worker: slot.index, workerPid: pid, code },
            `worker ${slot.index} (pid ${pid}) exited with code ${code} while stopping`,
          );
        }
        finishIfStopped();
        return;
      }
      if (!serving) {
        log.error(
          { worker: slot.index, workerPid: pid, code, signal },
          `worker ${slot.index} (pid ${pid}) ${howItEnded(code, signal)} before it listened; not starting the others`,
        );
        for (const signal of ['SIGTERM', 'SIGINT'] as const) process.off(signal, stop);
        resolve(1);
        return;
      }
      const stable = slot.listeningSince !== undefined && Date.now() - slot.listeningSince >= stableAfterMs;
      slot.failures = stable ? 1 : slot.failures + 1;
      const delay = restartDelay(slot.failures);
      log.error(
        {
          worker: slot.index,
          workerPid: pid,
          code,
          signal,
          failuresInARow: slot.failures,
          restartInMs: delay,
        },
        `worker ${slot.index} (pid ${pid}) ${howItEnded(code, signal)}; starting a new one in ${delay} ms`,
      );
      slot.restart = setTimeout(() => start(slot), delay);
    };

    function stop(signal: NodeJS.Signals): void {
      const now = Date.now();
      if (stopping !== undefined) {
        // A terminal's Ctrl+C reaches every process of the group, and wrappers forward theirs.
        if (now - stopping.at < repeatWindowMs) return;
        log.warn(`${signal} again: killing the workers without waiting`);
        for (const slot of slots) slot.worker?.process.kill('SIGKILL');
        resolve(signal === 'SIGINT' ? 130 : 143);
        return;
      }
      stopping = { at: now };
      const running = slots.filter((slot) => slot.worker !== undefined);
      log.info(
        `${signal} received: stopping ${running.length} ${running.length === 1 ? 'worker' : 'workers'}`,
      );
      for (const slot of slots) {
        if (slot.restart !== undefined) clearTimeout(slot.restart);
        slot.restart = undefined;
        slot.worker?.process.kill(signal);
      }
      const deadline = stopDeadline();
      setTimeout(() => {
        const left = slots.filter((slot) => slot.worker !== undefined);
        if (left.length === 0) return;
        log.error(`${left.length} still running ${deadline} ms after ${signal}: killing them`);
        failedToStop = true;
        for (const slot of left) slot.worker?.process.kill('SIGKILL');
      }, deadline).unref();
      finishIfStopped();
    }

    for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, stop);
    const [first] = slots;
    if (first !== undefined) start(first);
  });
}
