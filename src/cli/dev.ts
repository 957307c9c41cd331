/**
 * `proceed dev`: the app runs in a child process (dev-runner) that is replaced when a watched
 * file changes. A fresh process is the only reload that drops every module, timer and
 * connection of the old app; the old child is gone before the new one binds the port.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { displayPath } from './display.js';
import { resolveEntry } from './entry.js';
import { exitCodeOf, forwardSignals, stopWhenOrphanedUnderNpx } from './signals.js';
import { isTypeScript, sibling, typescriptLoaderArgs } from './typescript.js';
import { commands, listenAddress, parseCommand } from './usage.js';
import { watchTrees } from './watch.js';

/** How long a child may take to shut down after SIGTERM before it is killed. */
const stopTimeoutMs = 10_000;

function say(message: string): void {
  process.stdout.write(`[proceed dev] ${message}\n`);
}

/** Drops directories inside another one of the list: their tree is watched already. */
function outermost(directories: readonly string[]): string[] {
  const unique = [...new Set(directories.map((directory) => resolve(directory)))];
  return unique.filter(
    (directory) => !unique.some((other) => other !== directory && directory.startsWith(other + sep)),
  );
}

/**
 * Runs `proceed dev [entry] [--port N] [--host H] [--watch DIR]...`. Never resolves: the process
 * ends when the app ends after a signal.
 *
 * @example
 * await devCommand(['src/app.ts', '--port', '4000']);
 */
export async function devCommand(args: readonly string[]): Promise<void> {
  const { values, entry: given } = parseCommand(commands.dev, args);
  const { port, host } = listenAddress(values, process.env, commands.dev.usage);
  const cwd = process.cwd();
  const entry = resolveEntry(cwd, given);
  const projectSource = join(cwd, 'src');
  const roots = outermost([
    dirname(entry),
    ...(existsSync(projectSource) ? [projectSource] : []),
    ...(values.watch ?? []).map((directory) => resolve(cwd, directory)),
  ]);
  const missing = roots.filter((root) => !existsSync(root));
  if (missing.length > 0) say(`not watching ${missing.join(', ')}: no such directory`);

  const runArgs = [
    ...process.execArgv,
    ...(isTypeScript(entry) ? typescriptLoaderArgs(cwd, entry) : []),
    sibling('dev-runner'),
    entry,
    String(port),
    host,
  ];
  // One secret for the whole session when none is set: tokens signed before a restart on save
  // still verify after it (docs/cli.md, "proceed dev").
  const configuredSecret = process.env.JWT_SECRET !== undefined && process.env.JWT_SECRET !== '';
  const env = configuredSecret
    ? process.env
    : { ...process.env, JWT_SECRET: randomBytes(48).toString('base64url') };
  if (!configuredSecret)
    say(
      'JWT_SECRET is not set: an app that signs tokens gets one random secret for this session, so they outlive restarts on save (not a restart of proceed dev)',
    );
  let child: ChildProcess | undefined;
  let restartPending = false;
  let stopping = false;
  let killTimer: NodeJS.Timeout | undefined;

  const launch = () => {
    const started = spawn(process.execPath, runArgs, {
      stdio: ['ignore', 'inherit', 'inherit'],
      env,
    });
    child = started;
    started.on('exit', (code, signal) => {
      if (killTimer !== undefined) clearTimeout(killTimer);
      killTimer = undefined;
      child = undefined;
      if (stopping) {
        watcher.close();
        process.exit(exitCodeOf(code, signal));
      }
      if (restartPending) {
        restartPending = false;
        launch();
        return;
      }
      say(`the app exited (${signal ?? `code ${code}`}); waiting for a change to restart`);
    });
  };

  const watcher = watchTrees(roots, (files) => {
    if (stopping) return;
    // Editors save through temporary files; name one that still exists.
    const shown = files.find((file) => existsSync(file)) ?? files[0];
    const first = shown === undefined ? 'a file' : displayPath(shown, cwd);
    const more = files.length > 1 ? ` and ${files.length - 1} more` : '';
    say(`${first}${more} changed: restarting`);
    if (child === undefined) {
      launch();
      return;
    }
    if (restartPending) return;
    restartPending = true;
    const stoppingChild = child;
    stoppingChild.kill('SIGTERM');
    killTimer = setTimeout(() => stoppingChild.kill('SIGKILL'), stopTimeoutMs);
  });

  forwardSignals(
    () => child,
    () => {
      stopping = true;
      restartPending = false;
      if (child === undefined) {
        watcher.close();
        process.exit(0);
      }
    },
  );
  stopWhenOrphanedUnderNpx();

  say(`watching ${roots.map((root) => relative(cwd, root) || '.').join(', ')}`);
  launch();
  await new Promise<never>(() => undefined);
}
