import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import type { OperatorSettings } from './config/env.js';
import { NO_TRACER, type Tracer } from './kernel/trace.js';

// Tracing, as the standard OTEL_* settings ask: spans exported over OTLP/HTTP to the collector they name. Off
// (no endpoint), yoke's tracer is OpenTelemetry's no-op: no exporter, no span kept.

export interface Tracing {
  tracer: Tracer;
  /** Where spans go, or null when tracing is off. */
  endpoint: string | null;
  /** Sends what is still buffered, then stops. */
  shutdown(): Promise<void>;
}

export const NO_TRACING: Tracing = { tracer: NO_TRACER, endpoint: null, shutdown: async () => {} };

let contextManager: AsyncLocalStorageContextManager | null = null;

export function startTracing(settings: Pick<OperatorSettings, 'otlpTraces' | 'serviceName'>): Tracing {
  const otlp = settings.otlpTraces;
  if (!otlp) return NO_TRACING;
  // A span's children are the spans started while it is active, across awaits: one context manager per process.
  if (!contextManager) {
    contextManager = new AsyncLocalStorageContextManager().enable();
    context.setGlobalContextManager(contextManager);
  }
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: settings.serviceName }),
    spanProcessors: [
      new BatchSpanProcessor(new OTLPTraceExporter({ url: otlp.url, headers: otlp.headers }), {
        scheduledDelayMillis: 1000,
      }),
    ],
  });
  return { tracer: provider.getTracer('yoke'), endpoint: otlp.url, shutdown: () => provider.shutdown() };
}
