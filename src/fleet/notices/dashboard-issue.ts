import { createHash } from 'node:crypto';
import { CONTROL_LABEL } from '../../forge/types.js';
import { dashboardIssueBody, dashboardIssueTitle, type DashboardIssueView } from './messages.js';
import type { DeliveryItem } from '../../store/delivery/delivery-items.js';
import type { Run } from '../../store/fleet/runs.js';
import type { DashboardIssue } from '../../store/fleet/dashboard-issues.js';
import { waitingItem, type Waiting } from '../candidate.js';
import { runUrl } from './links.js';
import { STUCK_LABEL, type RepoFacts } from '../repo-facts.js';
import { autoLoopOn, isPaused } from '../repo-state.js';
import type { Io } from '../context.js';

// A dashboard issue per repository, like Renovate's Dependency Dashboard: the
// body of the repository's yoke:control issue shows the auto loop, failures
// and pause with what recovers them, live runs, the work waiting with why it
// is not running, stuck PRs and owed deliveries. Derived from the pass's
// facts and decisions (pure), written after them, and only when it changed.

export interface DashboardIssueInputs {
  facts: RepoFacts;
  /** The repository's runs now, after this pass's launches. */
  runs: readonly Run[];
  /** What this pass passed over in the repository, in pass order. */
  waiting: readonly Waiting[];
  owed: readonly DeliveryItem[];
  webUrl: string;
  /** When the view is made (the week of issue costs ends here). */
  now: number;
}

export function viewDashboardIssue(i: DashboardIssueInputs): DashboardIssueView {
  const { facts } = i;
  const repo = facts.repo.fullName;
  return {
    repo,
    webUrl: i.webUrl,
    autoLoop: autoLoopOn(facts.state, facts.config),
    autoFrom: facts.state.autoLoop === null ? 'config' : 'command',
    failures: facts.state.consecutiveFailures,
    threshold: facts.pauseThreshold,
    paused: isPaused(facts.state),
    live: i.runs
      .filter((r) => r.status === 'live')
      .map((r) => ({
        id: r.id,
        kind: r.kind,
        subject: r.subject,
        title: r.title,
        why: r.why,
        workflowUrl: runUrl(i.webUrl, r),
      })),
    waiting: i.waiting.map(waitingItem),
    stuck: facts.view.pulls
      .filter((p) => p.labels.includes(STUCK_LABEL))
      .map((p) => ({ number: p.number, title: p.title })),
    owed: i.owed.map((o) => ({ issue: o.issueNumber, pr: o.prNumber })),
    spentToday: facts.spentToday.repo,
    dailyUsd: facts.config.budget?.daily_usd ?? null,
    issueCosts: issueCostsOf(i.runs, i.now),
  };
}

/** BU06: each issue's reported cost over its runs launched in the last 7 days, the five costliest. Pure. */
function issueCostsOf(runs: DashboardIssueInputs['runs'], now: number): DashboardIssueView['issueCosts'] {
  const by = new Map<number, { issue: number; usd: number; runs: number }>();
  for (const r of runs) {
    if (r.issueNumber === null || !r.cost || r.launchedAt < now - 7 * 86_400_000) continue;
    const c = by.get(r.issueNumber) ?? { issue: r.issueNumber, usd: 0, runs: 0 };
    c.usd += r.cost.usd;
    c.runs += 1;
    by.set(r.issueNumber, c);
  }
  return [...by.values()].sort((a, b) => b.usd - a.usd || a.issue - b.issue).slice(0, 5);
}

const digestOf = (body: string): string => createHash('sha256').update(body).digest('hex');

/**
 * Keeps the body current: finds the repository's open yoke:control issue (or
 * creates one) the first time, then edits its body only when the text changes.
 * Returns what it wrote, for the pass log.
 */
export async function syncDashboardIssue(
  deps: Io,
  view: DashboardIssueView,
  facts: RepoFacts,
  /** What the store holds of this repository's dashboard issue, when the caller read it already (null: none). */
  recorded?: DashboardIssue | null,
): Promise<'created' | 'edited' | 'unchanged'> {
  const { store, forge } = deps;
  const body = dashboardIssueBody(view);
  const digest = digestOf(body);
  const known = recorded === undefined ? await store.dashboardIssues.get(view.repo) : recorded;
  if (known?.bodyDigest === digest) return 'unchanged';
  let number = known?.issueNumber ?? (await forge.findOpenIssue(facts.repo, CONTROL_LABEL));
  if (number === null) {
    number = await forge.createIssue(facts.repo, {
      title: dashboardIssueTitle(view.repo),
      body,
      labels: [CONTROL_LABEL],
    });
    await store.dashboardIssues.record(view.repo, number, digest, deps.clock.now());
    return 'created';
  }
  await forge.updateIssue(facts.repo, number, { body });
  await store.dashboardIssues.record(view.repo, number, digest, deps.clock.now());
  return 'edited';
}
