import type { FastifyServerOptions } from 'fastify';

/** Where and how much to log. */
export interface LoggerOptions {
  /** pino level; default `LOG_LEVEL`, else `info`. */
  level?: string;
  /** Readable lines instead of JSON; default: in a terminal, outside production. */
  pretty?: boolean;
  /** Write JSON lines here instead of stdout (a file, a collector, a test). */
  stream?: { write(line: string): void };
}

/** `false` silences logs; `true` or omitted: JSON, or readable lines in a terminal outside production. */
export type LoggerSetting = boolean | LoggerOptions;

/** Query parameters in database errors (Drizzle writes them into the message): hashes, emails. */
const queryParameters = /\nparams: [^\n]*/g;

interface LoggedError {
  [key: string]: unknown;
  type: string;
  message: string;
  stack: string;
}

const redact = (text: string) => text.replace(queryParameters, '\nparams: [redacted]');

/**
 * What an error looks like in the log: its type, message, stack, code and cause, with the
 * query parameters a database error carries cut out. Other properties are left out: a driver
 * error's fields can hold the very values (a password hash) that must never be logged.
 */
export function serializeError(error: Error, depth = 0): LoggedError {
  const logged: LoggedError = {
    type: error.name,
    message: redact(error.message),
    stack: redact(error.stack ?? ''),
  };
  const code = (error as { code?: unknown }).code;
  if (code !== undefined) logged.code = code;
  if (depth < 5 && error.cause instanceof Error) logged.cause = serializeError(error.cause, depth + 1);
  return logged;
}

/** Logger options for Fastify: structured JSON in production, readable lines in a terminal. */
export function loggerOptions(setting: LoggerSetting | undefined): Pick<FastifyServerOptions, 'logger'> {
  if (setting === false) return { logger: false };
  const options = typeof setting === 'object' ? setting : {};
  const level = options.level ?? process.env.LOG_LEVEL ?? 'info';
  const serializers = { err: serializeError };
  if (options.stream !== undefined) return { logger: { level, serializers, stream: options.stream } };
  const pretty = options.pretty ?? (process.env.NODE_ENV !== 'production' && process.stdout.isTTY === true);
  if (!pretty) return { logger: { level, serializers } };
  return {
    logger: {
      level,
      serializers,
      transport: { target: 'pino-pretty', options: { translateTime: 'HH:MM:ss', ignore: 'pid,hostname' } },
    },
  };
}
