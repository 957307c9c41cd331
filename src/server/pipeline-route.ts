/**
 * The Fastify adapter's one route that hands requests to the app's pipeline
 * (src/server/fastify-adapter.ts). The pipeline logs, traces and observes those requests itself,
 * so Fastify's request log and hooks leave them alone.
 */
import type { FastifyRequest } from 'fastify';

/** Set in the route's config. */
export const pipelineRoute = Symbol('proceed.pipelineRoute');

/** Whether the pipeline answers `request`: it took the pipeline's route, or no route of Fastify's. */
export function isPipelineRequest(request: FastifyRequest): boolean {
  return request.is404 || (request.routeOptions.config as { [pipelineRoute]?: true })[pipelineRoute] === true;
}
