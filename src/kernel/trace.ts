import {
  context,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  TraceFlags,
  type Attributes,
  type Context,
  type Link,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import { errorText } from './error-text.js';

// Spans, as yoke makes them: a tracer is handed in (tracing.ts makes one from the OTEL_* settings); with none,
// yoke's is OpenTelemetry's no-op, which keeps no span and exports nothing. An issue's trace is recorded in the
// store as the span its label opened, and every later span about the issue names it as its parent.

/** The tracer when tracing is off: OpenTelemetry's no-op (yoke registers no global provider). */
export const NO_TRACER: Tracer = trace.getTracer('yoke');

export { SpanKind, type Attributes, type Span, type Tracer };

/** A recorded span's ids (an issue's trace, a pass): what a later span names as its parent or links to. */
export interface SpanRef {
  traceId: string;
  spanId: string;
}

/** The ids of a span, to record or link to. */
export const refOf = (span: Span): SpanRef => {
  const c = span.spanContext();
  return { traceId: c.traceId, spanId: c.spanId };
};

/** A context whose parent is a recorded span (its spans are that span's children, in its trace); null: a new trace. */
export const under = (parent: SpanRef | null): Context =>
  parent
    ? trace.setSpanContext(ROOT_CONTEXT, { ...parent, traceFlags: TraceFlags.SAMPLED, isRemote: true })
    : ROOT_CONTEXT;

/** A span for what already happened (a run from its launch to its end): started and ended at the times given. */
export function recordSpan(
  tracer: Tracer,
  name: string,
  at: { parent: SpanRef | null; start: number; end: number; attributes?: Attributes; links?: Link[]; error?: string },
): SpanRef {
  const span = tracer.startSpan(
    name,
    {
      startTime: at.start,
      ...(at.attributes ? { attributes: at.attributes } : {}),
      ...(at.links ? { links: at.links } : {}),
    },
    under(at.parent),
  );
  if (at.error) span.setStatus({ code: SpanStatusCode.ERROR, message: at.error });
  span.end(Math.max(at.start, at.end));
  return refOf(span);
}

/** Runs `fn` in a new span, active while it runs (its GitHub requests are its children); a throw marks it failed. */
export async function inSpan<T>(
  tracer: Tracer,
  name: string,
  opts: { parent?: SpanRef | null; attributes?: Attributes; links?: Link[]; kind?: SpanKind },
  fn: (span: Span) => Promise<T>,
): Promise<T> {
  const span = tracer.startSpan(
    name,
    {
      ...(opts.attributes ? { attributes: opts.attributes } : {}),
      ...(opts.links ? { links: opts.links } : {}),
      ...(opts.kind !== undefined ? { kind: opts.kind } : {}),
    },
    opts.parent === undefined ? context.active() : under(opts.parent),
  );
  try {
    return await context.with(trace.setSpan(context.active(), span), () => fn(span));
  } catch (err) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: errorText(err) });
    throw err;
  } finally {
    span.end();
  }
}

/** The span active now, to link to (a pass's, from a launch it made); null when none is. */
export const activeRef = (): SpanRef | null => {
  const span = trace.getActiveSpan();
  return span && span.spanContext().traceFlags & TraceFlags.SAMPLED ? refOf(span) : null;
};
