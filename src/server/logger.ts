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

/** Logger options for Fastify: structured JSON in production, readable lines in a terminal. */
export function loggerOptions(setting: LoggerSetting | undefined): Pick<FastifyServerOptions, 'logger'> {
  if (setting === false) return { logger: false };
  const options = typeof setting === 'object' ? setting : {};
  const level = options.level ?? process.env.LOG_LEVEL ?? 'info';
  if (options.stream !== undefined) return { logger: { level, stream: options.stream } };
  const pretty = options.pretty ?? (process.env.NODE_ENV !== 'production' && process.stdout.isTTY === true);
  if (!pretty) return { logger: { level } };
  return {
    logger: {
      level,
      transport: { target: 'pino-pretty', options: { translateTime: 'HH:MM:ss', ignore: 'pid,hostname' } },
    },
  };
}
