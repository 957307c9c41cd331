/** The contract between `proceed start`/`dev`/`routes`/… and an app's entry module. */

/**
 * What the CLI tells an entry whose default export is a function: which command loads it,
 * whether the app will serve requests, and in how many processes. `routes`, `openapi` and
 * `manifest` only read the app, so an entry may skip real connections then (the blog opens no
 * database at all). `clustered` means `proceed start --workers N`: N processes serve the
 * same port at once and are replaced when they die, so refuse what cannot be shared, such as an
 * embedded database.
 */
export interface EntryContext {
  command: 'start' | 'dev' | 'routes' | 'openapi' | 'manifest';
  serve: boolean;
  /** How many processes run this app at once: 1 unless `proceed start --workers N`. */
  workers: number;
  /**
   * Whether this process is a worker of `proceed start --workers` (any N, 1 included): a worker
   * that dies is replaced by a new process that opens what it had open.
   */
  clustered: boolean;
}

/** Set while the CLI loads an entry only to read it; global, as the entry may load its own copy. */
const inspecting = Symbol.for('proceedjs.inspecting-entry');

/** Runs `load` with every app it creates marked as inspected (see `AppOptions.inspect`). */
export async function loadingForInspection<T>(load: () => Promise<T>): Promise<T> {
  const global = globalThis as { [inspecting]?: boolean };
  global[inspecting] = true;
  try {
    return await load();
  } finally {
    delete global[inspecting];
  }
}

/** Whether an app created now is one the CLI only reads. */
export function isLoadingForInspection(): boolean {
  return (globalThis as { [inspecting]?: boolean })[inspecting] === true;
}
