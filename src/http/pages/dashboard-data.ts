import { isOneOf, keysOf } from '../../kernel/guards.js';
import { landingState, stacksInFlight, type StackInFlight } from '../../fleet/spawn/landers.js';
import { stringify } from 'yaml';
import type { FleetContext } from '../../fleet/context.js';
import type { PassReport } from '../../fleet/engine/pass.js';
import { buildFleetReport, type FleetReport } from '../operator/report.js';
import type { Run } from '../../store/fleet/runs.js';
import { layoutTimeline, type Timeline } from './timeline.js';
import type { StageState } from '../../store/delivery/deployment-runs.js';

// What the web dashboard shows, read from the store and the last pass in one
// go: the fleet report, a day of runs on the timeline, deployment runs with
// their stages, members and waits. Rendering (dashboard.ts) only formats it.

export const TIMELINE_MS = 24 * 3600_000;

/** The spans the timeline can show. `fit`, the default, is the last 24 hours from its first run on, so short runs stay visible. */
export const TIMELINE_SPANS = {
  fit: TIMELINE_MS,
  '24h': TIMELINE_MS,
  '6h': 6 * 3600_000,
  '1h': 3600_000,
  '10m': 600_000,
} as const;
export type TimelineSpan = keyof typeof TIMELINE_SPANS;

export const parseSpan = (s: string | null): TimelineSpan => (isOneOf(keysOf(TIMELINE_SPANS), s) ? s : 'fit');

/** Where the timeline starts: the span back from now, or for `fit` just before the day's first run. */
function spanStart(span: TimelineSpan, runs: readonly Run[], now: number): number {
  const from = now - TIMELINE_SPANS[span];
  if (span !== 'fit') return from;
  const first = Math.min(...runs.map((r) => Math.max(r.launchedAt, from)), now - 60_000);
  return Math.max(from, first - Math.max(1_000, (now - first) * 0.02));
}

export interface DeploymentCard {
  id: string;
  repo: string;
  commit: string;
  status: string;
  trackingIssue: number | null;
  stages: {
    name: string;
    kind: string;
    state: StageState | 'pending';
    current: boolean;
    deployment: { id: number; environment: string; state: string; logUrl: string | null } | null;
  }[];
  members: { issue: number; pr: number; removed: boolean }[];
  waits: { subject: string; detail: string; command: string; notice: string }[];
}

/** An open claim PR on the repository page: its head, the yoke/lander check run yoke wrote there, and the lander's verdict for that head. */
export interface ClaimCard {
  pr: number;
  title: string;
  headSha: string;
  author: string;
  issue: number | null;
  check: { status: string; conclusion: string | null; run: string | null } | null;
  verdict: { verdict: string; run: string } | null;
  /** LD01-LD06: where it stands in the landing queue, in words. */
  landing: string;
  /** BU06: what its issue's runs (AFK, landers, fixes) reported they cost so far. */
  cost: { usd: number; runs: number };
}

/** What only the repository page shows. */
export interface RepoPageData {
  repo: string;
  /** The opt-in file as yoke parsed it, defaults filled in, as YAML; null before any read. */
  settings: string | null;
  readAt: number | null;
  dashboardIssue: number | null;
  claims: ClaimCard[];
  /** LD05: the stacks of claim PRs being validated together now. */
  stacks: StackInFlight[];
}

export interface DashboardData {
  report: FleetReport;
  webUrl: string;
  timeline: Timeline;
  span: TimelineSpan;
  /** Runs of the window with what they cost, by id (for links and spend). */
  runs: ReadonlyMap<string, Run>;
  deployments: DeploymentCard[];
  /** How often the page fetches itself again. */
  refreshMs: number;
  /** Only for a repository's page. */
  repoPage: RepoPageData | null;
}

async function buildRepoPage(store: FleetContext['store'], repo: string): Promise<RepoPageData> {
  const read = await store.repos.lastRead(repo);
  const runs = await store.runs.listForRepo(repo);
  const merges = await store.merges.listForRepo(repo);
  const checks = (await store.checkRuns.list()).filter((c) => c.repo === repo);
  const claimed = new Map((await store.claims.listForRepo(repo)).map((c) => [c.prNumber, c.issueNumber]));
  const costs = new Map<number, { usd: number; runs: number }>();
  for (const p of read?.openClaims ?? []) {
    const spent = await store.spend.ofWork(repo, claimed.get(p.number) ?? null, p.number);
    costs.set(p.number, { usd: Number(spent.usd), runs: Number(spent.runs) });
  }
  const claims = (read?.openClaims ?? []).map((p): ClaimCard => {
    const written = checks.find((c) => c.prNumber === p.number && c.headSha === p.headSha)?.written ?? null;
    const [status, conclusion, run] = written ? written.split(':') : [];
    const lander = runs
      .filter((r) => r.kind === 'lander' && r.prNumber === p.number && r.headSha === p.headSha && r.verdict !== null)
      .at(-1);
    return {
      pr: p.number,
      title: p.title,
      headSha: p.headSha,
      author: p.author,
      issue: claimed.get(p.number) ?? null,
      check: status ? { status, conclusion: conclusion || null, run: run || null } : null,
      verdict: lander ? { verdict: lander.verdict!, run: lander.id } : null,
      landing: landingState(
        { runs, merges },
        { number: p.number, headSha: p.headSha },
        p.baseSha,
        p.mergeQueue ?? null,
      ),
      cost: costs.get(p.number) ?? { usd: 0, runs: 0 },
    };
  });
  return {
    repo,
    settings: read?.settings ? stringify(read.settings).trimEnd() : null,
    readAt: read?.readAt ?? null,
    dashboardIssue: (await store.dashboardIssues.get(repo))?.issueNumber ?? null,
    claims,
    stacks: stacksInFlight(runs),
  };
}

export async function buildDashboardData(
  ctx: Pick<FleetContext, 'store' | 'policy' | 'clock'>,
  last: PassReport | null,
  opts: { webUrl: string; refreshMs: number; span?: TimelineSpan; repo?: string },
): Promise<DashboardData> {
  const { store, policy, clock } = ctx;
  const now = clock.now();
  const report = await buildFleetReport(ctx, last);
  const windowRuns = await store.runs.listSince(now - TIMELINE_MS);
  const cap = Math.max(policy.globalCap, ...Object.values(policy.repoCaps));
  const waitsOf = new Map(report.deliveries.map((d) => [d.id, d.waits]));
  const shown = (await store.deploymentRuns.list()).filter(
    (r) => r.status === 'active' || r.updatedAt >= now - TIMELINE_MS,
  );
  const stagesOf = await Promise.all(shown.map((run) => store.deploymentRuns.stages(run.id)));
  const membersOf = await Promise.all(shown.map((run) => store.deploymentRuns.members(run.id)));
  const deploymentsOf = await Promise.all(shown.map((run) => store.stageDeployments.forRun(run.id)));
  const deployments = shown.map((run, i): DeploymentCard => {
    const records = new Map(stagesOf[i]!.map((s) => [s.stage, s]));
    const latest = (stage: string) => deploymentsOf[i]!.filter((d) => d.stage === stage).at(-1);
    return {
      id: run.id,
      repo: run.repo,
      commit: run.commit,
      status: run.status,
      trackingIssue: run.trackingIssue,
      stages: run.settings.stages.map((s, i) => ({
        name: s.name,
        kind: s.kind,
        state: records.get(s.name)?.state ?? 'pending',
        current: run.status === 'active' && i === run.currentStage,
        // DP01: the stage's newest GitHub deployment.
        deployment: ((d) =>
          d ? { id: d.deploymentId, environment: d.environment, state: d.state, logUrl: d.logUrl } : null)(
          latest(s.name),
        ),
      })),
      // In issue order, as a person reads a list of issues (the store keeps them in the order they merged).
      members: membersOf[i]!.map((m) => ({ issue: m.issueNumber, pr: m.prNumber, removed: m.removedAt !== null })).sort(
        (a, b) => a.issue - b.issue,
      ),
      waits: waitsOf.get(run.id) ?? [],
    };
  });
  return {
    report,
    webUrl: opts.webUrl,
    timeline: layoutTimeline(windowRuns, { from: spanStart(opts.span ?? 'fit', windowRuns, now), to: now, cap }),
    span: opts.span ?? 'fit',
    runs: new Map(windowRuns.map((r) => [r.id, r])),
    deployments,
    refreshMs: opts.refreshMs,
    repoPage: opts.repo ? await buildRepoPage(store, opts.repo) : null,
  };
}

/**
 * TR11: what a person signed in with their own token sees: the repositories
 * GitHub says their login may read, and nothing of the others (their runs,
 * spend, waits, deliveries). Installation failures are the operators' alone.
 */
export function dashboardFor(d: DashboardData, mayRead: (repo: string) => boolean): DashboardData {
  const mine = <T extends { repo: string }>(xs: readonly T[]): T[] => xs.filter((x) => mayRead(x.repo));
  const r = d.report;
  return {
    ...d,
    report: {
      ...r,
      repos: mine(r.repos),
      recentRuns: mine(r.recentRuns),
      spend: mine(r.spend),
      issueSpend: mine(r.issueSpend),
      // A repository's own budgets; the fleet's holds every repository's spend, which is not theirs to read.
      budgets: r.budgets.filter((b) => b.repo !== null && mayRead(b.repo)),
      held: mine(r.held),
      unsettled: mine(r.unsettled),
      deliveries: mine(r.deliveries),
      environments: mine(r.environments),
      lastPass: r.lastPass && {
        ...r.lastPass,
        waiting: mine(r.lastPass.waiting),
        deferred: mine(r.lastPass.deferred),
        authFailures: [],
      },
    },
    timeline: { ...d.timeline, bars: mine(d.timeline.bars) },
    runs: new Map([...d.runs].filter(([, run]) => mayRead(run.repo))),
    deployments: mine(d.deployments),
    repoPage: d.repoPage && mayRead(d.repoPage.repo) ? d.repoPage : null,
  };
}
