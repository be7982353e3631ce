import { makeRefusal } from '../../kernel/codes/table.js';
import { RepoConfig } from '../../config/repo-config.js';
import { fieldOf } from '../../kernel/guards.js';
import { deferralRefusal, waitingItem, type WaitingItem } from '../candidate.js';
import { utcDayStart } from '../../kernel/clock.js';
import type { Run } from '../../store/fleet/runs.js';
import type { DailySpend, IssueSpend } from '../../store/fleet/spend.js';
import { budgetLines, budgetStatus, NO_FLEET_BUDGETS, periodOf, type BudgetStatus } from '../money/budgets.js';
import { openingLedger } from '../money/ledger.js';
import { effectiveCap } from '../cap.js';
import type { FleetContext } from '../context.js';
import type { PassReport } from '../engine/pass.js';
import { isPaused } from '../repo-state.js';
import { protectedFileList } from './messages.js';

/** The fleet's part of the report (the delivery half adds its own above both: http/operator/report.ts). */
export interface FleetPart {
  generatedAt: string;
  globalCap: number;
  liveCount: number;
  repos: {
    repo: string;
    cap: number;
    /** An operator's override (`yoke repo auto`), or null: the opt-in file's `auto:` decides. */
    autoLoop: boolean | null;
    /** Whether the auto loop is on, as the next pass takes it: the override, else the opt-in file as last read (null: not read yet). */
    autoLoopOn: boolean | null;
    consecutiveFailures: number;
    paused: boolean;
    disabledReason: string | null;
    live: PublicRun[];
    recovery: string | null;
  }[];
  recentRuns: PublicRun[];
  lastPass: {
    trigger: string;
    candidates: number;
    launched: number;
    authFailures: { installationId: number; detail: string; recovery: string }[];
    /** SC03: repositories the request budget left unread, each with why and what recovers it. */
    deferred: { repo: string; code: 'request_budget' | 'reader_pending'; message: string; recovery: string }[];
    /** Work the pass passed over, in the order it would take it, each with the why-not the decision returned. */
    waiting: WaitingItem[];
  } | null;
  /** Spend reported in the last 7 days, per repository and UTC day, newest first. */
  spend: DailySpend[];
  /** BU06: every budget in force, with what it holds of its limit and its runway at the current rate. */
  budgets: BudgetStatus[];
  /** BU06: the issues whose runs launched in the last 7 days cost the most, with the kinds of run it went to. */
  issueSpend: IssueSpend[];
  /** BU02: runs launched this month that ended without reporting what they spent, each holding its reservation. */
  unsettled: {
    id: string;
    repo: string;
    kind: string;
    reservedUsd: number;
    launchedAt: number;
    code: 'run_unsettled';
    message: string;
    recovery: string;
  }[];
  /** TR14: open claim PRs whose accepted head changes a protected path, waiting for a person's approval. */
  held: {
    repo: string;
    pr: number;
    headSha: string;
    files: string[];
    code: 'protected_paths_changed';
    message: string;
    recovery: string;
  }[];
}

/** Holds not yet approved whose head is still the open claim PR's head, as the last read saw it. */
async function openHolds(store: FleetContext['store']): Promise<FleetPart['held']> {
  const out: FleetPart['held'] = [];
  const reads = new Map<string, Awaited<ReturnType<FleetContext['store']['repos']['lastRead']>>>();
  for (const h of await store.protectedHolds.list()) {
    if (h.approvedBy || !h.files.length) continue;
    if (!reads.has(h.repo)) reads.set(h.repo, await store.repos.lastRead(h.repo));
    if (!reads.get(h.repo)?.openClaims.some((c) => c.number === h.prNumber && c.headSha === h.headSha)) continue;
    const r = makeRefusal('protected_paths_changed', {
      number: h.prNumber,
      sha: h.headSha.slice(0, 7),
      files: protectedFileList(h.files),
    });
    out.push({
      repo: h.repo,
      pr: h.prNumber,
      headSha: h.headSha,
      files: h.files,
      code: 'protected_paths_changed',
      message: r.message,
      recovery: r.recovery,
    });
  }
  return out;
}

export type PublicRun = Omit<Run, 'secretHash'>;

export const publicRun = ({ secretHash: _s, ...rest }: Run): PublicRun => rest;

/** A repository's budget settings as its last read parsed them (defaults filled in), or none. */
const budgetOf = (settings: unknown): RepoConfig['budget'] => {
  const budget = RepoConfig.shape.budget.safeParse(fieldOf(settings, 'budget'));
  return budget.success ? budget.data : undefined;
};

export async function buildFleetPart(
  ctx: Pick<FleetContext, 'store' | 'policy' | 'clock'>,
  last: PassReport | null,
): Promise<FleetPart> {
  const { store, policy, clock } = ctx;
  const live = await store.runs.listLive();
  const reads = await store.repos.lastReads();
  const configuredAuto = (name: string): boolean | null => {
    const auto = fieldOf(reads.get(name)?.settings, 'auto');
    return typeof auto === 'boolean' ? auto : null;
  };
  return {
    generatedAt: new Date(clock.now()).toISOString(),
    globalCap: policy.globalCap,
    liveCount: live.length,
    repos: (await store.repos.list()).map((r) => ({
      repo: r.fullName,
      cap: effectiveCap(policy, r.fullName),
      autoLoop: r.autoLoop,
      autoLoopOn: r.autoLoop ?? configuredAuto(r.fullName),
      consecutiveFailures: r.consecutiveFailures,
      paused: isPaused(r),
      disabledReason: r.disabledReason,
      live: live.filter((l) => l.repo === r.fullName).map(publicRun),
      // Disabled comes first: a reset cannot lift it, only a fixed opt-in file can.
      recovery: r.disabledReason
        ? makeRefusal('repo_disabled', { repo: r.fullName, detail: r.disabledReason }).recovery
        : isPaused(r)
          ? makeRefusal('repo_paused', { repo: r.fullName, threshold: policy.pauseThreshold }).recovery
          : null,
    })),
    recentRuns: (await store.runs.listAll(50)).map(publicRun),
    spend: await store.spend.daily(utcDayStart(clock.now()) - 6 * 86_400_000, clock.now() + 1),
    budgets: budgetStatus(
      [
        ...budgetLines('', undefined, policy, 'fix', clock.now()).filter((l) => l.repo === null),
        ...[...reads].flatMap(([name, read]) =>
          budgetLines(name, budgetOf(read?.settings), NO_FLEET_BUDGETS, 'fix', clock.now()),
        ),
      ],
      await openingLedger(store, clock.now()),
      clock.now(),
    ),
    issueSpend: await store.spend.byIssue(utcDayStart(clock.now()) - 6 * 86_400_000),
    held: await openHolds(store),
    unsettled: (await store.spend.holdings(periodOf(clock.now(), 'month').since))
      .filter((h) => !h.live)
      .map((h) => {
        const r = makeRefusal('run_unsettled', {
          run: h.id,
          repo: h.repo,
          kind: h.kind,
          usd: h.reservedUsd.toFixed(2),
        });
        const { live: _live, ...run } = h;
        return { ...run, code: 'run_unsettled' as const, message: r.message, recovery: r.recovery };
      }),
    lastPass: last && {
      trigger: last.trigger,
      candidates: last.candidates.length,
      launched: last.outcomes.filter((o) => o.result.kind === 'launched').length,
      waiting: last.waiting.map(waitingItem),
      deferred: last.deferred.map((d) => {
        const r = deferralRefusal(d);
        return { repo: d.repo, code: r.code, message: r.message, recovery: r.recovery };
      }),
      authFailures: last.authFailures.map((f) => ({
        ...f,
        recovery: makeRefusal('installation_auth_failed', { installation: f.installationId, detail: f.detail })
          .recovery,
      })),
    },
  };
}
