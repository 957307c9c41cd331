import type { FastifyServerOptions } from 'fastify';

/** `false` silences logs; `true`/omitted picks JSON in production and readable lines elsewhere; an object is pino's options. */
export type LoggerSetting = boolean | { level?: string; pretty?: boolean };

/** Logger options for Fastify: structured JSON in production, readable lines in a terminal. */
export function loggerOptions(setting: LoggerSetting | undefined): Pick<FastifyServerOptions, 'logger'> {
  if (setting === false) return { logger: false };
  const level = (typeof setting === 'object' ? setting.level : undefined) ?? process.env.LOG_LEVEL ?? 'info';
  const pretty =
    (typeof setting === 'object' ? setting.pretty : undefined) ??
    (process.env.NODE_ENV !== 'production' && process.stdout.isTTY === true);
  if (!pretty) return { logger: { level } };
  return {
    logger: {
      level,
      transport: { target: 'pino-pretty', options: { translateTime: 'HH:MM:ss', ignore: 'pid,hostname' } },
    },
  };
}
