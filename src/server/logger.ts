import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type Logger, type LoggerOptions as PinoOptions, pino } from 'pino';
import { ProceedConfigError } from '../core/errors.js';
import { withoutQueryParameters } from '../core/redaction.js';
import { loggedUrl } from '../http/url.js';
import { batchedStandardOutput, type TraceFields } from './log-output.js';

export type { TraceFields };

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

interface LoggedError {
  [key: string]: unknown;
  type: string;
  message: string;
  stack: string;
}

const redact = withoutQueryParameters;

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

/** pino's mixin for those fields; none when the app traces nothing. */
function traceMixin(traceFields: TraceFields | undefined): { mixin?: () => object } {
  if (traceFields === undefined) return {};
  // A new object each time: pino merges the line's own fields into what the mixin returns.
  return { mixin: () => traceFields() ?? {} };
}

/**
 * What a line logged with `{ req }` or `{ res }` holds of a request and its answer: the fields of
 * Fastify's own serializers, which the app's logger replaces (the request line of
 * src/server/request-log.ts writes the same, in the same order).
 */
const requestSerializers = {
  req: (request: FastifyRequest) => ({
    method: request.method,
    url: loggedUrl(request.url),
    version: request.headers?.['accept-version'],
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  }),
  res: (reply: FastifyReply) => ({ statusCode: reply.statusCode }),
};

const levels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** The level asked for (`logger.level`, else `LOG_LEVEL`, else `info`), or a refusal naming where it came from. */
function levelOf(given: string | undefined): string {
  // An empty LOG_LEVEL is one left unset, as a shell or an orchestrator writes it.
  const fromEnvironment = process.env.LOG_LEVEL === '' ? undefined : process.env.LOG_LEVEL;
  const level = given ?? fromEnvironment ?? 'info';
  if (!levels.includes(level))
    throw new ProceedConfigError(
      `${given === undefined ? 'LOG_LEVEL' : 'logger.level'} must be one of ${levels.join(', ')} (got ${JSON.stringify(level)})`,
    );
  return level;
}

/** pino's options and destination for a logger setting: JSON in production, readable lines in a terminal. */
function pinoSettings(
  setting: LoggerSetting | undefined,
  traceFields?: TraceFields,
): { options: LoggerOptionsOfPino; destination: { write(line: string): void } | undefined } {
  const options = typeof setting === 'object' ? setting : {};
  const level = levelOf(options.level);
  const serializers = { ...requestSerializers, err: serializeError };
  const mixin = traceMixin(traceFields);
  if (options.stream !== undefined)
    return { options: { level, serializers, ...mixin }, destination: options.stream };
  const wanted = options.pretty ?? (process.env.NODE_ENV !== 'production' && process.stdout.isTTY === true);
  const printer = wanted ? prettyPrinter() : undefined;
  if (options.pretty === true && printer === undefined) {
    throw new ProceedConfigError('logger.pretty needs pino-pretty: npm install pino-pretty');
  }
  if (printer === undefined)
    return { options: { level, serializers, ...mixin }, destination: batchedStandardOutput() };
  return {
    options: {
      level,
      serializers,
      ...mixin,
      transport: { target: printer, options: { translateTime: 'HH:MM:ss', ignore: 'pid,hostname' } },
    },
    destination: undefined,
  };
}

type LoggerOptionsOfPino = PinoOptions<never>;

/**
 * The app's logger on Node, or undefined when `logger: false` silences it. The app makes it, not
 * Fastify: a Fastify given a logger times every request and listens for the end of every answer
 * (two listeners added and removed per request, about 5 % of a small read's CPU), which the
 * request log only needs at `info` (docs/deployment.md, "Logs").
 */
export function appLogger(setting: LoggerSetting | undefined, traceFields?: TraceFields): Logger | undefined {
  if (setting === false) return undefined;
  const { options, destination } = pinoSettings(setting, traceFields);
  return destination === undefined ? pino(options) : pino(options, destination);
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
      level: levelOf(options.level),
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
  return appLogger(setting) ?? pino({ enabled: false });
}
