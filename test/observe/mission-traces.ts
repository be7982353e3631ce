import { beforeAll, describe, expect, it } from 'vitest';
import { DEMO_REPO } from '../../sandbox/demo-repo.js';
import type { OtlpReceiver, ReceivedSpan } from '../../sandbox/otlp-receiver.js';

// yoke's OTLP export, received in the test's process: one issue reads as one trace, from its label to its
// close-out, each step a child of the span its label opened; each pass is a trace of its own, which the
// launches it made link to; GitHub's requests are client spans of the step that made them. The mission is
// test/sandbox/runs-reach.e2e.test.ts's (the Actions launcher, runs reaching yoke through GitHub), its sandbox
// stopped, so that the exporter has flushed what it held.

/** What the mission left to read: the spans received, #1's trace as the store keeps it, and its runs' traceparents. */
export interface MissionTraces {
  receiver: OtlpReceiver;
  issueTrace: { traceId: string; spanId: string } | null;
  dispatched: (string | undefined)[];
}

export function describeTracesOfMission(after: () => MissionTraces | null): void {
  describe("the mission's traces, as yoke exported them", () => {
    let receiver: OtlpReceiver;
    let issueTrace: MissionTraces['issueTrace'];
    let dispatched: MissionTraces['dispatched'];
    beforeAll(() => {
      const got = after();
      if (!got) throw new Error('the mission these traces are read from did not run to its end (see the test above)');
      ({ receiver, issueTrace, dispatched } = got);
    });

    const ofTrace = (traceId: string) => receiver.spans.filter((s) => s.traceId === traceId);

    describe("one issue's trace, as yoke exported it", () => {
      it('opens with its label and is the same trace for every step, each a child of that span', () => {
        expect(issueTrace).not.toBeNull();
        const spans = ofTrace(issueTrace!.traceId);
        const root = spans.find((s) => s.parentSpanId === '')!;
        expect(root).toMatchObject({
          name: 'yoke.issue.labeled',
          spanId: issueTrace!.spanId,
          service: 'yoke-sandbox',
          attributes: { 'yoke.repo': DEMO_REPO, 'yoke.issue': 1 },
        });
        expect(spans.filter((s) => s.parentSpanId === '')).toHaveLength(1);
        // Every step of the issue names the label's span as its parent.
        const steps = spans.filter((s) => s !== root);
        expect(steps.length).toBeGreaterThan(5);
        expect(steps.filter((s) => s.parentSpanId !== root.spanId)).toEqual([]);
        expect(steps.every((s) => s.attributes['yoke.issue'] === 1)).toBe(true);
      });

      it('holds each step from the label to the close-out, in order: launch, run, lander, merge, QA, close-out', () => {
        const names = ofTrace(issueTrace!.traceId)
          .sort((a, b) => a.startMs - b.startMs)
          .map((s) => s.name);
        const first = (n: string) => names.indexOf(n);
        expect(names[0]).toBe('yoke.issue.labeled');
        for (const n of [
          'yoke.launch afk_auto',
          'yoke.run afk_auto',
          'yoke.launch lander',
          'yoke.run lander',
          'yoke.merge',
          'yoke.qa staging-qa',
          'yoke.closeout',
        ])
          expect([n, first(n) > 0]).toEqual([n, true]);
        expect(first('yoke.launch afk_auto')).toBeLessThan(first('yoke.run afk_auto'));
        expect(first('yoke.launch afk_auto')).toBeLessThan(first('yoke.launch lander'));
        expect(first('yoke.merge')).toBeLessThan(first('yoke.closeout'));
        expect(names.at(-1)).toBe('yoke.closeout');
      });

      it("hands the run's workflow the issue's trace context (its traceparent input), so a traced job joins the trace", () => {
        expect(dispatched.length).toBeGreaterThan(0);
        expect(new Set(dispatched)).toEqual(new Set([`00-${issueTrace!.traceId}-${issueTrace!.spanId}-01`]));
      });

      it("carries a run's outcome, its verdict and what it cost (OpenTelemetry's GenAI conventions)", () => {
        const runs = ofTrace(issueTrace!.traceId).filter((s) => s.name.startsWith('yoke.run '));
        const lander = runs.find((s) => s.name === 'yoke.run lander' && s.attributes['yoke.run.verdict'] === 'accept');
        expect(lander?.attributes['yoke.run.outcome']).toBe('success');
        const agent = runs.find((s) => s.name === 'yoke.run afk_auto')!;
        expect(agent.attributes).toMatchObject({ 'yoke.run.kind': 'afk_auto', 'yoke.run.outcome': 'success' });
        // The demo's agent reports what its run cost (sandbox/agents/demo-run.ts): $0.42, 18,000 in and 2,400 out.
        expect(agent.attributes).toMatchObject({
          'yoke.cost.usd': 0.42,
          'gen_ai.usage.input_tokens': 18_000,
          'gen_ai.usage.output_tokens': 2_400,
        });
      });
    });

    describe('passes and GitHub requests', () => {
      it("each pass is its own trace, with its gather, decide and write; a launch links to the pass's decide", () => {
        const passes = receiver.spans.filter((s) => s.name === 'yoke.pass' && s.parentSpanId === '');
        expect(passes.length).toBeGreaterThan(0);
        const parts = (p: ReceivedSpan) =>
          receiver.spans.filter((s) => s.parentSpanId === p.spanId && s.traceId === p.traceId).map((s) => s.name);
        expect(
          passes.some((p) =>
            ['yoke.pass.gather', 'yoke.pass.decide', 'yoke.pass.write'].every((n) => parts(p).includes(n)),
          ),
        ).toBe(true);
        const launch = ofTrace(issueTrace!.traceId).find((s) => s.name === 'yoke.launch afk_auto')!;
        const decide = receiver.spans.find((s) => s.spanId === launch.links[0]?.spanId);
        expect(decide?.name).toBe('yoke.pass.decide');
      });

      it("makes each GitHub request a client span named by its route's template, under the step that made it", () => {
        const requests = receiver.spans.filter((s) => s.kind === 3 && s.attributes['url.template']);
        expect(requests.length).toBeGreaterThan(0);
        expect(requests.filter((s) => /\/\d+(\/|$)/.test(String(s.attributes['url.template'])))).toEqual([]);
        const byId = new Map(receiver.spans.map((s) => [s.spanId, s]));
        expect(requests.some((r) => byId.get(r.parentSpanId)?.name.startsWith('yoke.pass'))).toBe(true);
      });
    });
  });
}
