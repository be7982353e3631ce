import { NO_TRACER, recordSpan, refOf, under, type Attributes, type SpanRef } from '../../kernel/trace.js';
import type { Run } from '../../store/fleet/runs.js';
import type { FleetContext, Io } from '../context.js';
import type { RepoRef } from '../../forge/types.js';

// One issue reads as one trace, from its label to its close-out: the label opens it (the span is recorded in
// the store), and each later step about the issue (its runs, its landers, its merge, its deployment's stages,
// its close-out) is a span whose parent is that one. With tracing off, none of this reads or writes anything.

/** Whether spans are kept at all: off, yoke reads no trace from the store either. */
const tracing = (io: Pick<Io, 'tracer'>): boolean => io.tracer !== undefined && io.tracer !== NO_TRACER;

/** The label opened the issue's trace: its first span, recorded, unless the issue has one already. */
export async function openIssueTrace(
  io: Pick<Io, 'store' | 'clock' | 'tracer'>,
  at: { repo: string; issue: number; via: 'webhook' | 'poll'; by?: string | null },
): Promise<void> {
  if (!tracing(io) || (await io.store.issueTraces.get(at.repo, at.issue))) return;
  const now = io.clock.now();
  const span = io.tracer!.startSpan(
    'yoke.issue.labeled',
    {
      startTime: now,
      attributes: {
        'yoke.repo': at.repo,
        'yoke.issue': at.issue,
        'yoke.seen_by': at.via,
        ...(at.by ? { 'yoke.labelled_by': at.by } : {}),
      },
    },
    under(null),
  );
  // Ended (so exported) only if it is the one recorded: a webhook and a pass that both saw the label first
  // leave one root, not two; a span never ended is never exported.
  const kept = await io.store.issueTraces.record(at.repo, at.issue, refOf(span), now);
  if (kept.spanId === span.spanContext().spanId) span.end(now);
}

/** A label webhook: when it is the repository's AFK label on an issue, it opens the issue's trace. */
export async function labelOpensTrace(
  io: Pick<FleetContext, 'store' | 'clock' | 'tracer' | 'forge' | 'policy'>,
  e: { repo: RepoRef; issueNumber: number; label: string; sender: string; isPull: boolean },
): Promise<void> {
  if (!tracing(io) || e.isPull) return;
  const cfg = await io.forge.readConfig(e.repo, { maxAgeMs: io.policy.configRefreshMs });
  if (cfg.state !== 'valid' || cfg.config.afk_label !== e.label) return;
  await openIssueTrace(io, { repo: e.repo.fullName, issue: e.issueNumber, via: 'webhook', by: e.sender });
}

/** A step about an issue, as a span of its trace (a new trace when its label's span was never recorded). */
export async function issueSpan(
  io: Pick<Io, 'store' | 'clock' | 'tracer'>,
  about: { repo: string; issue: number | null },
  name: string,
  at: { start: number; end?: number; attributes?: Attributes; links?: SpanRef[]; error?: string },
): Promise<void> {
  if (!tracing(io) || about.issue === null) return;
  const parent = await io.store.issueTraces.get(about.repo, about.issue);
  recordSpan(io.tracer!, name, {
    parent,
    start: at.start,
    end: at.end ?? io.clock.now(),
    attributes: { 'yoke.repo': about.repo, 'yoke.issue': about.issue, ...at.attributes },
    ...(at.links?.length ? { links: at.links.map((context) => ({ context: { ...context, traceFlags: 1 } })) } : {}),
    ...(at.error ? { error: at.error } : {}),
  });
}

/** The issue's trace as W3C trace context (`traceparent`), for the run's workflow; null when there is none. */
export async function issueTraceparent(
  io: Pick<Io, 'store' | 'tracer'>,
  about: { repo: string; issue: number | null },
): Promise<string | null> {
  if (!tracing(io) || about.issue === null) return null;
  const t = await io.store.issueTraces.get(about.repo, about.issue);
  return t ? `00-${t.traceId}-${t.spanId}-01` : null;
}

/** A run, from its launch to its end: its outcome, its verdict, and what it cost in the GenAI conventions. */
export function runSpanAttributes(run: Run): Attributes {
  return {
    'yoke.run.id': run.id,
    'yoke.run.kind': run.kind,
    ...(run.outcome ? { 'yoke.run.outcome': run.outcome } : {}),
    ...(run.verdict ? { 'yoke.run.verdict': run.verdict } : {}),
    ...(run.prNumber !== null ? { 'yoke.pr': run.prNumber } : {}),
    ...(run.cost
      ? {
          'gen_ai.operation.name': 'invoke_agent',
          'gen_ai.usage.input_tokens': run.cost.inputTokens ?? 0,
          'gen_ai.usage.output_tokens': run.cost.outputTokens ?? 0,
          'yoke.cost.usd': run.cost.usd,
        }
      : {}),
  };
}
