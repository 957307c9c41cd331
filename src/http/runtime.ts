/**
 * The runtime this process runs on, picked once here and nowhere else: what differs between
 * Node.js, Bun, Deno and Cloudflare Workers lives in one file per runtime under
 * `src/http/runtimes/` (docs/architecture.md, "Runtimes").
 */
import { ProceedConfigError } from '../core/errors.js';
import { bun } from './runtimes/bun.js';
import type { Runtime } from './runtimes/common.js';
import { deno } from './runtimes/deno.js';
import { node } from './runtimes/node.js';
import { workers } from './runtimes/workers.js';

export type { NativeServe, NativeServer, Runtime } from './runtimes/common.js';

const host = globalThis as { Bun?: unknown; Deno?: unknown; navigator?: { userAgent?: string } };

export const runtime: Runtime =
  host.navigator?.userAgent === 'Cloudflare-Workers'
    ? workers
    : host.Bun !== undefined
      ? bun
      : host.Deno !== undefined
        ? deno
        : node;

/** The refusal, on a runtime that cannot run Fastify (Workers), of what needs it. */
export function refusedOnWorkers(what: string, because: string): ProceedConfigError {
  return new ProceedConfigError(
    `${what} ${because}, which Cloudflare Workers cannot run; there, procedures and health checks serve through app.fetch (docs/deployment.md, "Cloudflare Workers")`,
  );
}
