/** CLI failures: each carries its exit code, and its message is what the user reads. */
import { ProceedConfigError } from '../core/errors.js';

/** A failure the user can fix; no stack trace. Exit code 1 unless said otherwise. */
export class CliError extends Error {
  override readonly name = 'CliError';
  readonly exitCode: number;

  constructor(message: string, exitCode = 1) {
    super(message);
    this.exitCode = exitCode;
  }
}

/** A bad command line: the message, then the command's usage, exit code 2. */
export class UsageError extends CliError {
  readonly usage: string;

  constructor(message: string, usage: string) {
    super(message, 2);
    this.usage = usage;
  }
}

/**
 * Prints a failure to stderr and returns the exit code: the message alone for the CLI's own
 * errors, the stack for anything else (the app threw while loading: the stack points at it).
 *
 * @example
 * process.exit(reportFailure(error));
 */
export function reportFailure(error: unknown): number {
  if (error instanceof UsageError) {
    process.stderr.write(`proceed: ${error.message}\n\n${error.usage}\n`);
    return error.exitCode;
  }
  if (error instanceof CliError) {
    process.stderr.write(`proceed: ${error.message}\n`);
    return error.exitCode;
  }
  // A configuration mistake (a bad procedure name, a missing JWT_SECRET in production) is
  // explained by its message; the stack would only bury it.
  // By name: the app may have loaded another copy of the framework than the CLI's own.
  if (error instanceof Error && error.name === ProceedConfigError.name) {
    process.stderr.write(`proceed: ${error.message}\n`);
    return 1;
  }
  const text = error instanceof Error ? (error.stack ?? `${error.name}: ${error.message}`) : String(error);
  process.stderr.write(`proceed: ${text}\n`);
  return 1;
}
