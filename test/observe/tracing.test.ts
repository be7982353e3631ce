import { describe, expect, it } from 'vitest';
import { issueSpan, openIssueTrace } from '../../src/fleet/issue-trace.js';
import { NO_TRACER } from '../../src/kernel/trace.js';
import { NO_TRACING, startTracing } from '../../src/tracing.js';
import { parseOperatorEnv } from '../../src/config/env.js';
import type { Store } from '../../src/store/store.js';

// Off, tracing costs nothing: no exporter, no span kept, and no trace read from the store or written to it.

/** A store any use of which fails the test. */
const untouchable = new Proxy({} as Store, {
  get: (_t, name) => {
    throw new Error(`the store was used (${String(name)}) with tracing off`);
  },
});

describe('tracing, off', () => {
  it('is off with no OTEL endpoint: the no-op tracer, nothing to export', () => {
    const env = parseOperatorEnv({});
    expect(env.ok && env.settings.otlpTraces).toBe(null);
    expect(startTracing({ otlpTraces: null, serviceName: 'yoke' })).toBe(NO_TRACING);
    expect(NO_TRACING.tracer).toBe(NO_TRACER);
    expect(NO_TRACER.startSpan('x').isRecording()).toBe(false);
  });

  it("reads and writes no issue's trace", async () => {
    const clock = { now: () => 0 };
    await openIssueTrace({ store: untouchable, clock }, { repo: 'acme/api', issue: 1, via: 'poll' });
    await issueSpan({ store: untouchable, clock, tracer: NO_TRACER }, { repo: 'acme/api', issue: 1 }, 'yoke.run', {
      start: 0,
    });
  });

  it('is on with OTEL_EXPORTER_OTLP_ENDPOINT, its traces endpoint and headers, as OpenTelemetry names them', () => {
    const env = parseOperatorEnv({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318/',
      OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20abc,x-team=fleet',
    });
    expect(env.ok && env.settings.otlpTraces).toEqual({
      url: 'http://127.0.0.1:4318/v1/traces',
      headers: { authorization: 'Bearer abc', 'x-team': 'fleet' },
    });
    const bad = parseOperatorEnv({ OTEL_EXPORTER_OTLP_HEADERS: 'no-equals-sign' });
    expect(bad.ok ? [] : bad.problems).toEqual([
      'OTEL_EXPORTER_OTLP_HEADERS: "no-equals-sign" is not key=value, e.g. authorization=Bearer%20TOKEN',
    ]);
  });
});
