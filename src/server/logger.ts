import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { FastifyServerOptions } from 'fastify';
import { type Logger, pino } from 'pino';
import { ProceedConfigError } from '../core/errors.js';
import { batchedStandardOutput } from './request-log.js';

/** Where and how much to log. */
export interface LoggerOptions {
  /** pino level; default `LOG_LEVEL`, else `info`. */
  level?: string;
  /**
   * Readable lines instead of JSON (through pino-pretty, which must be installed); default: in a
   * terminal, outside production, when pino-pretty is installed.
   */
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

/** pino-pretty's path, when the app installed it (an optional dependency: production logs JSON). */
function prettyPrinter(): string | undefined {
  for (const base of [join(process.cwd(), 'package.json'), import.meta.url]) {
    try {
      return createRequire(base).resolve('pino-pretty');
    } catch {
      // not installed there
    }
  }
  return undefined;
}

/**
 * Fields every line logged inside a traced request carries: `trace_id`, `span_id`
 * (docs/observability.md, "Logs").
 */
export type TraceFields = () => Record<string, string> | undefined;

/** pino's mixin for those fields; none when the app traces nothing. */
function traceMixin(traceFields: TraceFields | undefined): { mixin?: () => object } {
  if (traceFields === undefined) return {};
  const none = {};
  return { mixin: () => traceFields() ?? none };
}

/** Logger options for Fastify: structured JSON in production, readable lines in a terminal. */
export function loggerOptions(
  setting: LoggerSetting | undefined,
  traceFields?: TraceFields,
): Pick<FastifyServerOptions, 'logger'> {
  if (setting === false) return { logger: false };
  const options = typeof setting === 'object' ? setting : {};
  const level = options.level ?? process.env.LOG_LEVEL ?? 'info';
  const serializers = { err: serializeError };
  const mixin = traceMixin(traceFields);
  if (options.stream !== undefined)
    return { logger: { level, serializers, ...mixin, stream: options.stream } };
  const wanted = options.pretty ?? (process.env.NODE_ENV !== 'production' && process.stdout.isTTY === true);
  const printer = wanted ? prettyPrinter() : undefined;
  if (options.pretty === true && printer === undefined) {
    throw new ProceedConfigError('logger.pretty needs pino-pretty: npm install pino-pretty');
  }
  if (printer === undefined)
    return { logger: { level, serializers, ...mixin, stream: batchedStandardOutput() } };
  return {
    logger: {
      level,
      serializers,
      ...mixin,
      transport: { target: printer, options: { translateTime: 'HH:MM:ss', ignore: 'pid,hostname' } },
    },
  };
}

/** Workers have no standard output: a Worker's log is what it passes to console. */
const consoleLines = { write: (line: string) => console.log(line.trimEnd()) };

/**
 * The app's logger on Cloudflare Workers, where Fastify runs without one: Wrangler bundles pino's
 * browser build (package.json `browser`), which Fastify's logger cannot wrap. The same JSON lines
 * as on Node, through console; from either build of pino.
 */
export function workersLogger(setting: LoggerSetting | undefined, traceFields?: TraceFields): Logger {
  if (setting === false) return pino({ enabled: false });
  const options = typeof setting === 'object' ? setting : {};
  const stream = options.stream ?? consoleLines;
  return pino(
    {
      level: options.level ?? process.env.LOG_LEVEL ?? 'info',
      serializers: { err: serializeError },
      ...traceMixin(traceFields),
      // What the browser build reads instead of a stream; Node's build ignores it.
      browser: {
        asObject: true,
        serialize: true,
        write: (record) => stream.write(`${JSON.stringify(record)}\n`),
      },
    },
    stream,
  );
}

/**
 * A pino logger configured like an app's (the same setting), for code that runs outside one:
 * the CLI's process supervising `--workers`.
 *
 * @example
 * const log = createLogger();
 * log.info('3 workers serving http://127.0.0.1:3030');
 */
export function createLogger(setting?: LoggerSetting): Logger {
  const { logger } = loggerOptions(setting);
  if (logger === false || logger === undefined || logger === true) return pino({ enabled: logger !== false });
  const { stream, ...options } = logger as { stream?: { write(line: string): void } } & Record<
    string,
    unknown
  >;
  return stream === undefined ? pino(options) : pino(options, stream);
}
