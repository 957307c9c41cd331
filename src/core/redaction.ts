/**
 * What is cut out of an error before it leaves the process, in a log line, a trace or a
 * development answer: the query parameters a database error carries in its message (Drizzle
 * writes `params: …` there, last), which hold hashes, emails and tokens (docs/errors.md).
 */

/**
 * From `params:` to the end of the message, or to the first frame of a stack that follows it:
 * a parameter may itself hold line breaks (an address, a text), each one more line to cut.
 */
const queryParameters = /\nparams: [\s\S]*?(?=\n {4}at |$)/g;

/** The text without the query parameters a database error wrote into it. */
export const withoutQueryParameters = (text: string): string =>
  text.replace(queryParameters, '\nparams: [redacted]');

/** An error as it may leave the process: its type, message, stack and code, redacted; nothing else. */
export interface RedactedError {
  name: string;
  message: string;
  stack: string;
  code?: string | number;
}

/**
 * The error with the query parameters cut out of its message and stack; its other properties are
 * left behind (a driver error's fields can hold the very values that must not leave). Anything
 * thrown that is no `Error` is its text, redacted.
 */
export function redactedError(error: unknown): RedactedError | string {
  if (!(error instanceof Error)) return withoutQueryParameters(String(error));
  const redacted: RedactedError = {
    name: error.name,
    message: withoutQueryParameters(error.message),
    stack: withoutQueryParameters(error.stack ?? ''),
  };
  const { code } = error as { code?: unknown };
  if (typeof code === 'string' || typeof code === 'number') redacted.code = code;
  return redacted;
}
