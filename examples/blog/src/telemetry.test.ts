import { describe, expect, it } from 'vitest';
import { telemetryWanted } from './telemetry.js';

describe('telemetryWanted', () => {
  it('is asked for by an OTLP endpoint or a traces exporter', () => {
    expect(telemetryWanted({})).toBe(false);
    expect(telemetryWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })).toBe(true);
    expect(telemetryWanted({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/v1/traces' })).toBe(
      true,
    );
    expect(telemetryWanted({ OTEL_TRACES_EXPORTER: 'console' })).toBe(true);
    expect(telemetryWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: ' ' })).toBe(false);
  });

  it('is refused by a disabled SDK or a traces exporter of none, in any case', () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' };
    expect(telemetryWanted({ ...endpoint, OTEL_SDK_DISABLED: 'TRUE' })).toBe(false);
    expect(telemetryWanted({ ...endpoint, OTEL_TRACES_EXPORTER: 'none' })).toBe(false);
    expect(telemetryWanted({ ...endpoint, OTEL_TRACES_EXPORTER: 'NONE' })).toBe(false);
    expect(telemetryWanted({ ...endpoint, OTEL_TRACES_EXPORTER: 'otlp, none' })).toBe(false);
    expect(telemetryWanted({ ...endpoint, OTEL_SDK_DISABLED: 'false' })).toBe(true);
  });
});
