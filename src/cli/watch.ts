/**
 * Watches directory trees for `proceed dev`. One non-recursive `fs.watch` per directory rather
 * than `{ recursive: true }`: the walk can skip node_modules, dist and dot-directories (.git,
 * .data) before descending, so a project root with a large node_modules costs nothing.
 */
import { type Dirent, type FSWatcher, readdirSync, statSync, watch } from 'node:fs';
import { basename, join } from 'node:path';

const skippedDirectories = new Set(['node_modules', 'dist', 'coverage']);
/** Swap, backup and lock files editors write next to the real one. */
const editorNoise = /(?:~|\.sw[a-p]|\.tmp)$|^\.#|^4913$/;

function isSkippedDirectory(name: string): boolean {
  return skippedDirectories.has(name) || name.startsWith('.');
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

export interface TreeWatcher {
  close(): void;
}

/**
 * Calls `onChange` (debounced by `delayMs`) with the files that changed under `roots`.
 *
 * @example
 * const watcher = watchTrees(['src'], (files) => restart(files[0]));
 * watcher.close();
 */
export function watchTrees(
  roots: readonly string[],
  onChange: (files: string[]) => void,
  delayMs = 150,
): TreeWatcher {
  const watchers = new Map<string, FSWatcher>();
  let pending = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  const changed = (file: string) => {
    pending.add(file);
    if (timer !== undefined) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = undefined;
      const files = [...pending];
      pending = new Set();
      if (!closed) onChange(files);
    }, delayMs);
  };

  const add = (directory: string) => {
    if (closed || watchers.has(directory)) return;
    let watcher: FSWatcher;
    try {
      watcher = watch(directory, (_event, name) => {
        const file = name === null ? directory : join(directory, name.toString());
        if (name !== null && editorNoise.test(basename(file))) return;
        const gone = watchers.get(file);
        if (gone !== undefined && !isDirectory(file)) {
          gone.close();
          watchers.delete(file);
        }
        if (isDirectory(file)) {
          if (isSkippedDirectory(basename(file))) return;
          // A new directory (or one moved in) is watched from now on.
          add(file);
        }
        changed(file);
      });
    } catch {
      return; // removed between listing and watching
    }
    watcher.on('error', () => {
      watcher.close();
      watchers.delete(directory);
    });
    watchers.set(directory, watcher);
    let entries: Dirent[];
    try {
      entries = readdirSync(directory, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (entry.isDirectory() && !isSkippedDirectory(entry.name)) add(join(directory, entry.name));
    }
  };

  for (const root of roots) add(root);
  return {
    close() {
      closed = true;
      if (timer !== undefined) clearTimeout(timer);
      for (const watcher of watchers.values()) watcher.close();
      watchers.clear();
    },
  };
}
