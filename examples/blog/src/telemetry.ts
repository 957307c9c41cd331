/**
 * OpenTelemetry for the blog (docs/observability.md), from the standard `OTEL_*` variables: the
 * SDK starts when an OTLP endpoint (`OTEL_EXPORTER_OTLP_ENDPOINT`, or the traces' own) or a
 * traces exporter (`OTEL_TRACES_EXPORTER`) is named, unless `OTEL_SDK_DISABLED=true`. The SDK
 * reads everything else itself: `OTEL_EXPORTER_OTLP_PROTOCOL` (`http/protobuf`, `http/json`),
 * `OTEL_SERVICE_NAME`, `OTEL_TRACES_SAMPLER`, `OTEL_BSP_SCHEDULE_DELAY`, … It must start before
 * the database driver is loaded, so that its instrumentation sees every query.
 */

/**
 * Whether the environment asks for traces: an exporter named in `OTEL_TRACES_EXPORTER`, or an
 * OTLP endpoint, unless the SDK is disabled or the traces' exporter is `none` (metrics or logs
 * alone). Read case-insensitively, as the SDK reads them.
 */
export function telemetryWanted(env: NodeJS.ProcessEnv): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== '');
  if (exporters.includes('none')) return false;
  const named = (value: string | undefined) => value !== undefined && value.trim() !== '';
  return (
    exporters.length > 0 ||
    named(env.OTEL_EXPORTER_OTLP_ENDPOINT) ||
    named(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)
  );
}

/** The running SDK: flushed and stopped when the app closes. */
export interface Telemetry {
  shutdown(): Promise<void>;
}

/**
 * Starts the SDK with the PostgreSQL driver's instrumentation. Loaded only when wanted: an app
 * that traces nothing loads none of it.
 */
export async function startTelemetry(): Promise<Telemetry> {
  const [{ NodeSDK }, { PgInstrumentation }] = await Promise.all([
    import('@opentelemetry/sdk-node'),
    import('@opentelemetry/instrumentation-pg'),
  ]);
  const sdk = new NodeSDK({
    // Each query's span under the handler's, named for the statement without its values.
    instrumentations: [new PgInstrumentation({ requireParentSpan: true })],
  });
  sdk.start();
  return { shutdown: () => sdk.shutdown() };
}
