#!/usr/bin/env node
// The `proceed` command. It runs the CLI in a child node process that has tsx loaded, so app
// entries may be TypeScript. In a checkout (src/ present) it runs the CLI's TypeScript sources
// with the `source` export condition, so `import 'proceed'` resolves to src/*.ts; in the
// published package it runs the compiled dist/.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { constants } from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';

const sourceMain = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url));
const fromSource = existsSync(sourceMain);
const main = fromSource ? sourceMain : fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

const child = spawn(
  process.execPath,
  [
    ...process.execArgv,
    ...(fromSource ? ['--conditions=source'] : []),
    '--import',
    tsx,
    main,
    ...process.argv.slice(2),
  ],
  { stdio: 'inherit' },
);

// A terminal's Ctrl+C reaches both processes; a forwarded copy within a second is the same
// signal, and the CLI absorbs such copies, so forwarding cannot cut a graceful shutdown short.
const forwarded = new Map();
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    const now = Date.now();
    if (now - (forwarded.get(signal) ?? 0) < 1000) return;
    forwarded.set(signal, now);
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  });
}
child.on('error', (error) => {
  process.stderr.write(`proceed: cannot start node: ${error.message}\n`);
  process.exit(1);
});
child.on('exit', (code, signal) => {
  process.exit(code ?? 128 + (signal === null ? 0 : constants.signals[signal]));
});
