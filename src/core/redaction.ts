/**
 * What is cut out of an error before it leaves the process, in a log line, a trace or a
 * development answer: the query parameters a database error carries in its message (Drizzle
 * writes `params: …` there), which hold hashes, emails and tokens (docs/errors.md).
 */
const queryParameters = /\nparams: [^\n]*/g;

/** The text without the query parameters a database error wrote into it. */
export const withoutQueryParameters = (text: string): string =>
  text.replace(queryParameters, '\nparams: [redacted]');
