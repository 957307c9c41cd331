/**
 * `proceedjs/metrics`: Prometheus metrics on a port of their own (docs/metrics.md).
 *
 * @module proceedjs/metrics
 */
export { type MetricsPluginOptions, metricsPlugin, type PoolStats } from './plugin.js';
