/**
 * Signals across the CLI's processes. A terminal sends Ctrl+C to every process in the
 * foreground group, and each wrapper (bin/proceed.js, `proceed dev`) also forwards what it
 * receives, so one Ctrl+C can reach the app two or three times within milliseconds. The app
 * shuts down gracefully on the first; the copies must not kill it mid-shutdown.
 */
import type { ChildProcess } from 'node:child_process';
import { constants } from 'node:os';

/** Repeats of a signal within this window are copies of the same one. */
export const repeatWindowMs = 1000;

const handledSignals = ['SIGINT', 'SIGTERM'] as const;

/**
 * Call after `app.listen()` installed its once-only handlers: later SIGINT/SIGTERM within
 * {@link repeatWindowMs} are ignored (rather than killing the process with Node's default
 * action); a signal after that forces an exit, for a shutdown that hangs.
 *
 * @example
 * await app.listen({ port });
 * absorbRepeatedSignals();
 */
export function absorbRepeatedSignals(): void {
  let first: number | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    const now = Date.now();
    if (first === undefined) {
      first = now;
      return;
    }
    if (now - first < repeatWindowMs) return;
    process.stderr.write(`${signal} again: exiting without waiting for the shutdown to finish\n`);
    process.exit(signal === 'SIGINT' ? 130 : 143);
  };
  for (const signal of handledSignals) process.on(signal, onSignal);
}

/**
 * Under `npx` (npm exec), the command runs in a shell that npm ends on SIGTERM without passing
 * the signal on, so the server would go on running with no parent (docs/cli.md, "Signals").
 * There, the parent going away is a SIGTERM. Only under npm exec: a server started with `nohup`
 * or `&` from a shell that then exits is meant to outlive it.
 *
 * @example
 * await app.listen({ port });
 * stopWhenOrphanedUnderNpx();
 */
export function stopWhenOrphanedUnderNpx(env: NodeJS.ProcessEnv = process.env): void {
  if (env.npm_command !== 'exec') return;
  const parent = process.ppid;
  const watch = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(watch);
    process.kill(process.pid, 'SIGTERM');
  }, 250);
  watch.unref();
}

/**
 * Forwards SIGINT, SIGTERM and SIGHUP to a child, each signal at most once per
 * {@link repeatWindowMs}. Returns a function that stops forwarding.
 *
 * @example
 * const stop = forwardSignals(() => child, (signal) => { stopping = true; });
 */
export function forwardSignals(
  target: () => ChildProcess | undefined,
  onSignal: (signal: NodeJS.Signals) => void = () => undefined,
): () => void {
  const last = new Map<NodeJS.Signals, number>();
  const forward = (signal: NodeJS.Signals) => {
    onSignal(signal);
    const now = Date.now();
    const previous = last.get(signal);
    if (previous !== undefined && now - previous < repeatWindowMs) return;
    last.set(signal, now);
    const child = target();
    if (child !== undefined && child.exitCode === null && child.signalCode === null) child.kill(signal);
  };
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
  for (const signal of signals) process.on(signal, forward);
  return () => {
    for (const signal of signals) process.off(signal, forward);
  };
}

/** The exit code a shell reports for a process ended by a signal. */
export function exitCodeOf(code: number | null, signal: NodeJS.Signals | null): number {
  if (code !== null) return code;
  return 128 + (signal === null ? 0 : constants.signals[signal]);
}
