/**
 * One process at a time in an embedded database directory. PGlite keeps the whole database in
 * the memory of the process that opened it and writes it back to the directory: a second process
 * on the same directory (a seed while the server runs, a second server) sees none of the first
 * one's writes, and whichever closes last overwrites the other's. So the directory holds a lock
 * file, `proceed.lock`, naming the process that has it open.
 *
 * The holder refreshes the lock every {@link refreshEveryMs}. A lock left behind by a process
 * that died is taken over at once when it names another process of this machine that is gone (no
 * such pid, a zombie nobody reaps, or a pid reused by a process started later), after a bounded
 * wait when that process is still being torn down (a supervisor restarting a server it has just
 * killed), and otherwise once nobody has refreshed it for {@link staleAfterMs}: a pid proves
 * nothing across pid namespaces (two containers on one volume may both be pid 1). See
 * docs/blog.md, "The embedded database".
 */

import { existsSync, readFileSync } from 'node:fs';
import { open, readFile, stat, unlink, utimes } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { ProceedConfigError } from 'proceedjs/config';

/** The lock file's name inside the directory. */
export const lockFileName = 'proceed.lock';

/** How often the holder touches the lock, and when a lock from another machine counts as abandoned. */
export const refreshEveryMs = 10_000;
export const staleAfterMs = 30_000;

interface Holder {
  pid: number;
  hostname: string;
  since: string;
  /** The holder's start time in clock ticks since boot (Linux), so that a reused pid is no holder. */
  started?: string;
}

export interface DirectoryLock {
  /** The lock file. */
  readonly file: string;
  /** Removes the lock (only if it is still this process's). Safe to call twice. */
  release(): Promise<void>;
}

/** Directories this process holds: a second open from the same process is refused too. */
const heldHere = new Set<string>();

/** How long a holder that is exiting (its memory still being torn down) is waited for. */
export const exitingWaitMs = 10_000;

/** The kernel's PF_EXITING: the process is being torn down and will never run again. */
const exitingFlag = 0x4;

/**
 * Where a process stands, read from Linux's `/proc/<pid>/stat`: `gone` for no such process, a
 * zombie (dead, but not yet reaped by a parent that may never reap it: a container's init that
 * does not) or another process that reuses the pid; `exiting` while the kernel tears it down
 * (a SIGKILL of a large process takes a moment); `running` otherwise. Undefined where there is no
 * `/proc` (macOS): the caller asks the kernel with a signal 0 instead.
 */
async function processState(
  pid: number,
  started?: string,
): Promise<'running' | 'exiting' | 'gone' | undefined> {
  let stat: string;
  try {
    stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return undefined;
    return procMounted ? 'gone' : undefined;
  }
  // "pid (comm) state ppid …": the command may hold spaces and parentheses, so read after the last ")".
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const [state, flags, startTime] = [fields[0], Number(fields[6]), fields[19]];
  if (state === 'Z' || state === 'X' || state === 'x') return 'gone';
  if (started !== undefined && startTime !== started) return 'gone';
  return (flags & exitingFlag) !== 0 ? 'exiting' : 'running';
}

const procMounted = existsSync('/proc/self/stat');

/** This process's start time as `/proc` gives it (Linux), for the lock file. */
function ownStartTime(): string | undefined {
  if (!procMounted) return undefined;
  const stat = readFileSync('/proc/self/stat', 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, owned by another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Whether a process of this machine is gone: waits a bounded time for one that is exiting. */
async function goneFromThisMachine(holder: Holder): Promise<boolean> {
  const deadline = Date.now() + exitingWaitMs;
  for (;;) {
    const state = await processState(holder.pid, holder.started);
    if (state === undefined) return !isAlive(holder.pid);
    if (state !== 'exiting' || Date.now() >= deadline) return state === 'gone';
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

function parseHolder(text: string): Holder | undefined {
  try {
    const value = JSON.parse(text) as Partial<Holder>;
    if (
      typeof value.pid === 'number' &&
      typeof value.hostname === 'string' &&
      typeof value.since === 'string' &&
      (value.started === undefined || typeof value.started === 'string')
    ) {
      return value as Holder;
    }
  } catch {
    // half-written by a process that is creating it right now, or not ours
  }
  return undefined;
}

/** Whether the process named in a lock file may still have the directory open. */
async function stillHeld(holder: Holder | undefined, ageMs: number): Promise<boolean> {
  if (ageMs >= staleAfterMs) return false;
  // Unreadable: half-written by a process creating it right now.
  if (holder === undefined) return true;
  // Another machine's pid, or this very pid (another pid namespace: a container on the same
  // volume), says nothing: only the refresh does.
  if (holder.hostname !== hostname() || holder.pid === process.pid) return true;
  return !(await goneFromThisMachine(holder));
}

function refusal(directory: string, holder: Holder | undefined): ProceedConfigError {
  const who =
    holder === undefined
      ? 'another process'
      : holder.hostname === hostname()
        ? `another process (pid ${holder.pid}, since ${holder.since})`
        : `a process on ${holder.hostname} (pid ${holder.pid}, since ${holder.since})`;
  return new ProceedConfigError(
    `The database directory ${directory} is in use by ${who}. An embedded PGlite database can be ` +
      'open in one process at a time: stop that process first (run the seed while the server is ' +
      'stopped), or use a PostgreSQL server (DATABASE_URL=postgres://…) to share one database.',
  );
}

async function tryCreate(file: string, content: string): Promise<boolean> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(file, 'wx');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
  try {
    await handle.writeFile(content);
  } finally {
    await handle.close();
  }
  return true;
}

/** How old a takeover file must be to count as left by a process that died while taking over. */
const takeoverStaleMs = 10_000;

/**
 * Replaces an abandoned lock with this process's, or answers false when another process is doing
 * it or has done it. One takeover at a time: only the process that creates the takeover file
 * (O_EXCL) may remove the abandoned lock, and only if the lock is still exactly the one it judged;
 * then it creates its own lock the ordinary way, so a process that starts meanwhile can still win
 * it fairly. Without that file, two processes could each remove the other's fresh lock.
 */
async function takeOver(file: string, judged: string, content: string): Promise<boolean> {
  const takeover = `${file}.takeover`;
  if (!(await tryCreate(takeover, content))) {
    const age = await stat(takeover).then(
      (stats) => Date.now() - stats.mtimeMs,
      () => 0,
    );
    // A takeover abandoned halfway (its process died): clear it; the caller tries again.
    if (age >= takeoverStaleMs) await unlink(takeover).catch(() => undefined);
    return false;
  }
  try {
    const current = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined;
      throw error;
    });
    if (current !== undefined && current !== judged) return false;
    if (current !== undefined) await unlink(file).catch(() => undefined);
    return await tryCreate(file, content);
  } finally {
    await unlink(takeover).catch(() => undefined);
  }
}

/**
 * Takes the directory's lock, or throws a {@link ProceedConfigError} naming the process that
 * holds it. The directory must exist.
 *
 * @example
 * const lock = await lockDirectory('./.data/db');
 * try { … } finally { await lock.release(); }
 */
export async function lockDirectory(directory: string): Promise<DirectoryLock> {
  const absolute = resolve(directory);
  if (heldHere.has(absolute)) {
    throw refusal(absolute, { pid: process.pid, hostname: hostname(), since: 'earlier' });
  }
  const file = join(absolute, lockFileName);
  const started = ownStartTime();
  const content = JSON.stringify({
    pid: process.pid,
    hostname: hostname(),
    since: new Date().toISOString(),
    ...(started === undefined ? {} : { started }),
  });

  for (let attempt = 0; ; attempt++) {
    if (await tryCreate(file, content)) break;
    let text: string;
    let ageMs: number;
    try {
      [text, ageMs] = await Promise.all([
        readFile(file, 'utf8'),
        stat(file).then((stats) => Date.now() - stats.mtimeMs),
      ]);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue; // released meanwhile
      throw error;
    }
    const holder = parseHolder(text);
    if ((await stillHeld(holder, ageMs)) || attempt >= 3) throw refusal(absolute, holder);
    if (await takeOver(file, text, content)) break;
  }

  heldHere.add(absolute);
  const refresh = setInterval(() => {
    const now = new Date();
    utimes(file, now, now).catch(() => undefined);
  }, refreshEveryMs);
  refresh.unref();
  let released: Promise<void> | undefined;
  return {
    file,
    release() {
      released ??= (async () => {
        clearInterval(refresh);
        heldHere.delete(absolute);
        const current = await readFile(file, 'utf8').catch(() => undefined);
        if (current === content) await unlink(file).catch(() => undefined);
      })();
      return released;
    },
  };
}
