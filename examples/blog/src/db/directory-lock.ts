/**
 * One process at a time in an embedded database directory. PGlite keeps the whole database in
 * the memory of the process that opened it and writes it back to the directory: a second process
 * on the same directory (a seed while the server runs, a second server) sees none of the first
 * one's writes, and whichever closes last overwrites the other's. So the directory holds a lock
 * file, `proceed.lock`, naming the process that has it open.
 *
 * The holder refreshes the lock every {@link refreshEveryMs}. A lock left behind by a process
 * that died is taken over at once when it names another process of this machine that is gone,
 * and otherwise once nobody has refreshed it for {@link staleAfterMs}: a pid proves nothing
 * across pid namespaces (two containers on one volume may both be pid 1). See docs/blog.md,
 * "The embedded database".
 */

import { randomUUID } from 'node:crypto';
import { link, open, readFile, rename, stat, unlink, utimes } from 'node:fs/promises';
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
}

export interface DirectoryLock {
  /** The lock file. */
  readonly file: string;
  /** Removes the lock (only if it is still this process's). Safe to call twice. */
  release(): Promise<void>;
}

/** Directories this process holds: a second open from the same process is refused too. */
const heldHere = new Set<string>();

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, owned by another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function parseHolder(text: string): Holder | undefined {
  try {
    const value = JSON.parse(text) as Partial<Holder>;
    if (
      typeof value.pid === 'number' &&
      typeof value.hostname === 'string' &&
      typeof value.since === 'string'
    ) {
      return value as Holder;
    }
  } catch {
    // half-written by a process that is creating it right now, or not ours
  }
  return undefined;
}

/** Whether the process named in a lock file may still have the directory open. */
function stillHeld(holder: Holder | undefined, ageMs: number): boolean {
  if (ageMs >= staleAfterMs) return false;
  // Unreadable: half-written by a process creating it right now.
  if (holder === undefined) return true;
  const goneFromThisMachine =
    holder.hostname === hostname() && holder.pid !== process.pid && !isAlive(holder.pid);
  return !goneFromThisMachine;
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

/**
 * Moves an abandoned lock aside, but only the very one that was judged abandoned: when two
 * processes take over at once, the second must not remove the lock the first just made.
 */
async function removeAbandoned(
  directory: string,
  file: string,
  judged: string,
  holder: Holder | undefined,
): Promise<void> {
  const aside = `${file}.${randomUUID()}.abandoned`;
  try {
    await rename(file, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  const moved = await readFile(aside, 'utf8');
  if (moved !== judged) {
    // Someone else's fresh lock, made since it was judged: put it back and let its holder be.
    try {
      await link(aside, file);
      await unlink(aside);
    } catch (error) {
      // EEXIST: yet another process made a lock meanwhile; leave it be. Otherwise this file
      // system has no hard links: move it back. Either way, refuse rather than guess.
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') await unlink(aside);
      else await rename(aside, file).catch(() => undefined);
    }
    throw refusal(directory, parseHolder(moved) ?? holder);
  }
  await unlink(aside);
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
  const content = JSON.stringify({ pid: process.pid, hostname: hostname(), since: new Date().toISOString() });

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
    if (stillHeld(holder, ageMs) || attempt >= 3) throw refusal(absolute, holder);
    await removeAbandoned(absolute, file, text, holder);
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
