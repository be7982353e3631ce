import { createServer } from 'node:http';
import type { Candidate } from '../src/fleet/candidate.js';
import { issueSpan } from '../src/fleet/notices/issue-trace.js';
import { recordLaunch } from '../src/fleet/runs/launch.js';
import type { PassReport } from '../src/fleet/engine/pass.js';
import { spawnPass } from '../src/fleet/spawn/spawn-pass.js';
import { Metrics, type MetricSources } from '../src/http/operator/metrics.js';
import { inSpan } from '../src/kernel/trace.js';
import type { Launcher } from '../src/launcher/launcher.js';
import { startTracing } from '../src/tracing.js';
import type { BenchEngine } from './engines.js';

// The spawn pass over 10,000 candidates with metrics and tracing on, as a server runs it: each pass a span
// (exported over OTLP/HTTP to a sink on loopback), each launch a span of its issue's trace, each pass counted.

export async function benchObservedPass(
  engine: BenchEngine,
  candidates: readonly Candidate[],
  policy: { globalCap: number; repoCaps: Record<string, number>; pauseThreshold: number },
  launcher: Launcher,
  print: (name: string, value: number, unit: string) => void,
): Promise<void> {
  const sink = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200).end('{}'));
  });
  await new Promise<void>((r) => sink.listen(0, '127.0.0.1', r));
  const address = sink.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const tracing = startTracing({
    otlpTraces: { url: `http://127.0.0.1:${port}/v1/traces`, headers: {} },
    serviceName: 'yoke-bench',
  });
  // Counting a pass reads the GitHub client's request count (none here: the candidates are given); the scrape's
  // other sources are never read, so they are refused if they are.
  const unread = (what: string) => () => {
    throw new Error(`the observed bench reads no ${what}`);
  };
  const sources: MetricSources = {
    github: { requests: 0, notModified: 0 },
    lastPass: unread('last pass'),
    lead: unread('lead'),
    get fleet(): MetricSources['fleet'] {
      return unread('fleet')();
    },
  };
  const metrics = new Metrics(sources);
  const times: number[] = [];
  for (let round = 0; round < (engine.name === 'sqlite' ? 41 : 11); round++) {
    const store = await engine.open();
    let n = 0;
    const clock = { now: () => Date.now() };
    const deps = { store, launcher, clock, newRunId: () => `b${++n}` };
    const io = { store, clock, tracer: tracing.tracer };
    const t0 = performance.now();
    const result = await inSpan(tracing.tracer, 'yoke.pass', { parent: null }, () =>
      spawnPass(candidates, { liveCount: 0, liveSubjects: new Set() }, policy, async (c, cap) => {
        const rec = await recordLaunch(deps, c, cap);
        if (rec.kind !== 'recorded') return rec;
        await issueSpan(io, { repo: c.repo, issue: c.issueNumber }, `yoke.launch ${c.kind}`, { start: clock.now() });
        return { kind: 'launched', runId: rec.runId };
      }),
    );
    const report = {
      trigger: 'scheduler',
      outcomes: result.outcomes,
      candidates: [...candidates],
    } as unknown as PassReport;
    metrics.passed(report, (performance.now() - t0) / 1000);
    times.push(performance.now() - t0);
    await store.close();
  }
  await tracing.shutdown();
  await new Promise<void>((r) => sink.close(() => r()));
  const sorted = times.slice(1).sort((a, b) => a - b);
  print(
    `spawn_pass_10k_candidates_observed_ms${engine.suffix}`,
    sorted[Math.floor(sorted.length / 2)]!,
    'ms (metrics and tracing on)',
  );
}
