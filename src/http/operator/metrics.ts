import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { FleetContext } from '../../fleet/context.js';
import type { PassReport } from '../../fleet/engine/pass.js';
import { buildFleetPart } from '../../fleet/notices/report.js';
import { SPAWN_STAGES } from '../../fleet/candidate.js';
import { RUN_KINDS } from '../../store/fleet/runs.js';
import type { CacheStats } from '../../forge/github/conditional-cache.js';
import { keysOf } from '../../kernel/guards.js';
import { errorText } from '../../kernel/error-text.js';

export * from './metric-table.js';
import { METRICS, type Kind, type MetricDef, type MetricName } from './metric-table.js';

// yoke's figures in Prometheus's text format (prom-client writes it), collected as a scrape asks, from the
// declarations in metric-table.ts.

/** What the figures are read from: the fleet, the last pass, who leads, the GitHub client's counts. */
export interface MetricSources {
  fleet: Pick<FleetContext, 'store' | 'forge' | 'clock' | 'policy'>;
  lastPass: () => PassReport | null;
  /** Whether this process leads the ticks now, and the epoch of its lead. */
  lead: () => { leads: boolean; epoch: number };
  /** The GitHub client's own counts (the conditional cache counts each request it sees). */
  github: CacheStats;
}

type OfKind<K extends Kind> = { [N in MetricName]: (typeof METRICS)[N]['kind'] extends K ? N : never }[MetricName];

export class Metrics {
  /** This process's own figures, always served; the fleet's, served only while this process leads. */
  private readonly own = new Registry();
  private readonly fleetWide = new Registry();
  private readonly gauges = new Map<MetricName, Gauge>();
  private readonly counters = new Map<MetricName, Counter>();
  private readonly histograms = new Map<MetricName, Histogram>();
  private readonly seenInstallations = new Set<number>();

  constructor(private readonly sources: MetricSources) {
    for (const name of keysOf(METRICS)) {
      const d: MetricDef = METRICS[name];
      const registers = [d.scope === 'fleet' ? this.fleetWide : this.own];
      const common = { name, help: d.help, labelNames: [...d.labels], registers };
      if (d.kind === 'gauge') this.gauges.set(name, new Gauge(common));
      else if (d.kind === 'counter') this.counters.set(name, new Counter(common));
      else
        this.histograms.set(
          name,
          new Histogram({ ...common, buckets: [0.005, 0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60] }),
        );
    }
  }

  private gauge(name: OfKind<'gauge'>): Gauge {
    return this.gauges.get(name)!;
  }

  private counter(name: OfKind<'counter'>): Counter {
    return this.counters.get(name)!;
  }

  private requestsAtPassStart = 0;

  /** A pass begins: the GitHub requests sent from now are its. */
  passStarted(): void {
    this.requestsAtPassStart = this.sources.github.requests;
  }

  /** A pass this process ran, and how long it took. */
  passed(report: PassReport, seconds: number): void {
    this.gauge('yoke_last_pass_github_requests').set(this.sources.github.requests - this.requestsAtPassStart);
    this.counter('yoke_passes_total').inc({ trigger: report.trigger });
    this.histograms.get('yoke_pass_seconds')!.observe(seconds);
    for (const o of report.outcomes)
      this.counter('yoke_launches_total').inc({ kind: o.candidate.kind, result: o.result.kind });
  }

  /** A webhook delivery this process was sent (first: GitHub had not sent this delivery id before). */
  delivered(event: string, first: boolean): void {
    this.counter('yoke_webhook_deliveries_total').inc({ event, redelivered: first ? 'false' : 'true' });
  }

  /** Prometheus's text, every figure read as it is asked for. */
  async scrape(): Promise<string> {
    await this.readProcess();
    if (!this.sources.lead().leads) return this.own.metrics();
    this.fleetWide.resetMetrics();
    await this.readFleet();
    return Registry.merge([this.own, this.fleetWide]).metrics();
  }

  get contentType(): string {
    return this.own.contentType;
  }

  private async readProcess(): Promise<void> {
    const { leads, epoch } = this.sources.lead();
    this.gauge('yoke_leader').set(leads ? 1 : 0);
    this.gauge('yoke_leader_epoch').set(leads ? epoch : 0);
    this.gauge('yoke_tick_seconds').set(this.sources.fleet.policy.tickMs / 1000);
    const requests = this.counter('yoke_github_requests_total');
    requests.reset();
    for (const [key, n] of this.sources.github.byRoute ?? []) {
      const [method = '', status = '', ...route] = key.split(' ');
      requests.inc({ method, route: route.join(' '), status }, n);
    }
    const { forge, store, clock } = this.sources.fleet;
    for (const r of await store.repos.list())
      if (r.installationId !== null) this.seenInstallations.add(r.installationId);
    for (const id of this.seenInstallations) {
      const left = forge.budgetLeft(id);
      this.gauge('yoke_github_points_left').set({ installation: String(id) }, left.points);
      if (Number.isFinite(left.primary))
        this.gauge('yoke_github_primary_left').set({ installation: String(id) }, left.primary);
      const until = await store.rateHolds.until(`i${id}`);
      this.gauge('yoke_github_backoff_seconds').set(
        { installation: String(id) },
        Math.max(0, Math.ceil((until - clock.now()) / 1000)),
      );
    }
  }

  private async readFleet(): Promise<void> {
    const { store } = this.sources.fleet;
    const part = await buildFleetPart(this.sources.fleet, this.sources.lastPass());
    this.gauge('yoke_cap').set(part.globalCap);
    this.gauge('yoke_cap_used').set(part.liveCount);
    // Gauges that mean something at zero serve it: an idle fleet's live runs and waiting work are 0, not absent.
    for (const kind of RUN_KINDS) this.gauge('yoke_runs_live').set({ kind, repo: '' }, 0);
    for (const stage of SPAWN_STAGES) this.gauge('yoke_candidates_waiting').set({ stage, code: '' }, 0);
    // A repository is named only while it needs a person: at 10,000 repositories, 10,000 zeros would be series for nothing.
    this.gauge('yoke_repo_paused').set({ repo: '' }, 0);
    this.gauge('yoke_repo_disabled').set({ repo: '' }, 0);
    for (const r of part.repos) {
      if (r.paused) this.gauge('yoke_repo_paused').set({ repo: r.repo }, 1);
      if (r.disabledReason) this.gauge('yoke_repo_disabled').set({ repo: r.repo }, 1);
      for (const l of r.live) this.gauge('yoke_runs_live').inc({ kind: l.kind, repo: r.repo });
    }
    for (const w of part.lastPass?.waiting ?? [])
      this.gauge('yoke_candidates_waiting').inc({ stage: w.stage, code: w.code });
    for (const b of part.budgets) {
      const labels = { repo: b.repo ?? '', period: b.period };
      this.gauge('yoke_budget_limit_usd').set(labels, b.limitUsd);
      this.gauge('yoke_budget_held_usd').set(labels, b.heldUsd);
    }
    this.gauge('yoke_protected_holds').set(part.held.length);
    this.gauge('yoke_runs_unsettled').set(part.unsettled.length);
    for (const v of await store.figures.landerVerdicts())
      this.counter('yoke_lander_verdicts_total').inc({ verdict: v.verdict }, v.n);
    this.counter('yoke_flaky_heads_total').inc(await store.figures.flakyHeads());
    for (const m of await store.figures.merges()) this.counter('yoke_merges_total').inc({ state: m.state }, m.n);
    const longest = new Map<string, number>();
    for (const run of await store.deploymentRuns.list()) {
      const at = run.status === 'active' ? (run.settings.stages[run.currentStage]?.name ?? '') : '';
      this.gauge('yoke_deployment_runs').inc({ status: run.status, stage: at });
      if (run.status !== 'active' || !run.lastWaits) continue;
      const { stage, waits } = run.lastWaits;
      for (const w of waits) this.gauge('yoke_deployment_stage_waits').inc({ stage, code: w.code });
      const since = (await store.deploymentRuns.stage(run.id, stage))?.updatedAt;
      if (waits.length && since !== undefined)
        longest.set(stage, Math.max(longest.get(stage) ?? 0, (this.sources.fleet.clock.now() - since) / 1000));
    }
    for (const [stage, seconds] of longest)
      this.gauge('yoke_deployment_waiting_seconds').set({ stage }, Math.round(seconds));
  }
}

/** Answers a scrape: the figures as Prometheus reads them, or a 500 that says it could not read them. */
export async function serveMetrics(metrics: Metrics, res: ServerResponse): Promise<true> {
  try {
    const body = await metrics.scrape();
    res.writeHead(200, { 'content-type': metrics.contentType, 'cache-control': 'no-store' });
    res.end(body);
  } catch (err) {
    res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
    res.end(`yoke could not read its figures: ${errorText(err)}\n`);
  }
  return true;
}

/**
 * YOKE_METRICS_ADDRESS: a listener that serves `/metrics` and nothing else, with no token, for a Prometheus
 * on a network only operators reach. Resolves once it listens; a port taken is said, naming the setting.
 */
export function listenForMetrics(metrics: Metrics, at: { host: string; port: number }): Promise<Server> {
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? '/', 'http://metrics.local').pathname;
    if ((req.method ?? 'GET') !== 'GET' || (path !== '/metrics' && path !== '/yoke/metrics')) {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' });
      res.end('This address serves /metrics only.\n');
      return;
    }
    void serveMetrics(metrics, res);
  });
  return new Promise((resolve, reject) => {
    server.once('error', (err) =>
      reject(new Error(`YOKE_METRICS_ADDRESS: cannot listen on ${at.host}:${at.port}: ${err.message}`)),
    );
    server.listen(at.port, at.host, () => resolve(server));
  });
}
