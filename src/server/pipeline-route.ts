/**
 * The requests the Fastify adapter handed to the app's pipeline (src/server/fastify-adapter.ts).
 * The pipeline logs, traces and observes those itself, so Fastify's request log and hooks leave
 * them alone; a request Fastify answered itself (one of its routes, a hook that answered) stays
 * Fastify's to log.
 */
import type { IncomingMessage } from 'node:http';

const handed = new WeakSet<IncomingMessage>();

/** Notes that the pipeline answers `request`. */
export function handToPipeline(request: IncomingMessage): void {
  handed.add(request);
}

/** Whether the pipeline answered `request`. */
export function handedToPipeline(request: IncomingMessage): boolean {
  return handed.has(request);
}
