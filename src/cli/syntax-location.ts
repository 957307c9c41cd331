/**
 * Where a syntax error of an app's modules is. Node keeps the place out of the error a `catch`
 * receives (a stack of its own loader's frames) and prints it only when the error ends a process,
 * so the entry is imported again in a process of its own: a module graph that does not parse
 * runs none of its modules (only a module the entry's top level imports at run time, with
 * `await import()`, follows what ran before it), and that process's first lines say
 * `file:///…/syntax.mjs:2`, the line and a caret. It runs with the CLI's own flags, so that it
 * resolves the same modules, and is killed at 15 s.
 */
import { spawn } from 'node:child_process';
import { pathToFileURL } from 'node:url';

/** Whether an error is a syntax error of a module that does not say where (no frame outside Node). */
export function isUnplacedSyntaxError(error: unknown): error is SyntaxError {
  if (!(error instanceof SyntaxError)) return false;
  const frames = (error.stack ?? '').split('\n').filter((line) => line.trimStart().startsWith('at '));
  return frames.every((frame) => frame.includes('node:internal'));
}

/** The place of the syntax error that importing `file` meets, as Node prints it; undefined if none shows. */
export function syntaxErrorPlace(file: string): Promise<string | undefined> {
  const script = `await import(${JSON.stringify(pathToFileURL(file).href)});`;
  return new Promise((resolve) => {
    // The CLI's own flags and environment (conditions, loaders), so that the child resolves the
    // same modules and meets the same error; killed outright at 15 s, and answered on its exit.
    let stderr = '';
    const child = spawn(process.execPath, [...process.execArgv, '--input-type=module', '-e', script], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const stop = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      if (stderr.length < 64 * 1024) stderr += chunk;
    });
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(stop);
      child.stderr.destroy();
      const place = stderr.split(/\n\s*\n/)[0]?.trimEnd();
      resolve(place?.startsWith('file://') ? place : undefined);
    };
    child.on('error', finish);
    child.stderr.on('end', finish);
    // A process it started may hold the pipe open: what was written by the exit is what counts.
    child.on('exit', () => setTimeout(finish, 500).unref());
  });
}
