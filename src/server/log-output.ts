/**
 * Where the app's JSON log lines go (docs/deployment.md, "Logs"): standard output, written once per
 * turn of the event loop. Apart from the request log (src/server/request-log.ts), which is
 * Fastify's, so that an app without Fastify (Bun, Deno) writes its lines the same way.
 */
import { pino } from 'pino';

/**
 * Fields every line logged inside a traced request carries: `trace_id`, `span_id`
 * (docs/observability.md, "Logs").
 */
export type TraceFields = () => Record<string, string> | undefined;

/** The real `setImmediate`, kept when a test's fake timers replace the global one. */
export const atTurnEnd = setImmediate;

/** What runs before each write to standard output (the request lines held for the end of the turn). */
const beforeWrites = new Set<() => void>();

/** Runs `hook` before every write to standard output, and at exit. */
export function beforeStandardOutputWrites(hook: () => void): void {
  beforeWrites.add(hook);
}

const runBeforeWrites = () => {
  for (const hook of beforeWrites) hook();
};

/**
 * Lines to `destination` in one write per turn of the event loop: the lines logged while the
 * server handles a burst of requests go out together. A turn that logs more than 64 KiB writes
 * at once; `flush()` writes what is pending now, after what `beforeWrite` adds (the request
 * lines held for the end of the turn).
 */
export function batched(
  destination: { write(text: string): unknown },
  beforeWrite?: () => void,
): {
  write(line: string): void;
  flush(): void;
} {
  let pending: string[] = [];
  let size = 0;
  let scheduled = false;
  const flush = () => {
    beforeWrite?.();
    scheduled = false;
    if (pending.length === 0) return;
    const text = pending.length === 1 ? (pending[0] as string) : pending.join('');
    pending = [];
    size = 0;
    destination.write(text);
  };
  return {
    write(line: string) {
      pending.push(line);
      size += line.length;
      if (size >= 64 * 1024) flush();
      else if (!scheduled) {
        scheduled = true;
        atTurnEnd(flush);
      }
    },
    flush,
  };
}

let standardOutput: { write(line: string): void } | undefined;

/**
 * Standard output for a JSON log, {@link batched}, with the request lines held for the end of
 * the turn: one write for all. Whatever is pending is written when the process exits, a crash
 * included; a signal the process does not handle (SIGKILL, or SIGTERM without `handleSignals`)
 * or an abort can cost the lines of the turn it lands in. One for the whole process: every app
 * of it writes to the same standard output.
 */
export function batchedStandardOutput(): { write(line: string): void } {
  if (standardOutput !== undefined) return standardOutput;
  const output = batched(pino.destination({ dest: 1, sync: true }), runBeforeWrites);
  process.once('exit', output.flush);
  standardOutput = output;
  return output;
}

/** Whether `stream` is the process's batched standard output. */
export function isStandardOutput(stream: unknown): boolean {
  return stream !== undefined && stream === standardOutput;
}
