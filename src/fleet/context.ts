import type { OperatorSettings } from '../config/env.js';
import type { Clock } from '../kernel/clock.js';
import type { Forge, RepoName } from '../forge/types.js';
import type { Log } from '../kernel/log.js';
import type { Tracer } from '../kernel/trace.js';
import type { Store } from '../store/store.js';
import type { CapPolicy } from './cap.js';

/** The fleet's policy: data passed in, never constants in the loops. */
export interface FleetPolicy extends CapPolicy {
  pauseThreshold: number;
  configRefreshMs: number;
  landerAttemptsPerHead: number;
  /** SC01: how many repositories a pass reads at once. */
  readConcurrency: number;
  /** SC02: an idle repository is probed this often; an active one every pass. */
  idleProbeMs: number;
  /** SC02: how long a webhook, command or kick keeps a repository active. */
  activeWindowMs: number;
  tickMs: number;
  reaperMs: number;
  /** TR05: how often a command whose handling failed is tried before it is answered as failed. */
  commandAttempts: number;
  /** A command left 'processing' this long (a crash mid-command) may be tried again. */
  commandStaleMs: number;
  /** DX01: a dispatch starts no close-out after this long; one already running finishes. */
  closeoutBudgetMs: number;
  /** DX01: accepted members close in the run's order (merge order) or by item number. */
  closeoutOrder: 'run' | 'item';
  /** A close-out left 'running' this long (a crash) may be tried again. */
  closeoutStaleMs: number;
  /** BU01: the fleet's budgets (YOKE_DAILY_USD, YOKE_MONTHLY_USD) and the share of each new work may take. */
  dailyUsd: number | null;
  monthlyUsd: number | null;
  newWorkShare: number;
  /** Repositories a pass opens (or adopts) a dashboard issue for, at most: a new installation's issues are spread over passes. */
  dashboardIssuesPerPass: number;
  /** QA: how often the poll reads a delivery repository's issue updates for qa: labels a webhook may have missed. */
  labelSyncMs: number;
  /** How far back the first such read looks. */
  labelLookbackMs: number;
  /** A label this recent is left to its webhook (so one label is answered once). */
  labelGraceMs: number;
  /** How long an installation that refused a check run write (no `checks: write` yet) is left before the next try. */
  checkRetryMs: number;
}

export const DEFAULT_VISIBILITY_POLICY = { dashboardIssuesPerPass: 10, checkRetryMs: 10 * 60_000 } as const;

export const DEFAULT_LABEL_POLICY = {
  labelSyncMs: 5 * 60_000,
  labelLookbackMs: 30 * 86_400_000,
  labelGraceMs: 60_000,
} as const;

export const DEFAULT_COMMAND_POLICY = { commandAttempts: 3, commandStaleMs: 10 * 60_000 } as const;

export const DEFAULT_CLOSEOUT_POLICY = {
  closeoutBudgetMs: 5_000,
  closeoutOrder: 'run',
  closeoutStaleMs: 10 * 60_000,
} as const;

/** The fleet's policy as the operator's settings make it: their values, and the defaults for the rest. */
export function fleetPolicyOf(settings: OperatorSettings): FleetPolicy {
  return {
    globalCap: settings.globalCap,
    repoCaps: settings.repoCaps,
    pauseThreshold: settings.pauseThreshold,
    configRefreshMs: settings.configRefreshMs,
    landerAttemptsPerHead: settings.landerAttemptsPerHead,
    readConcurrency: settings.maxRequestsInFlight,
    idleProbeMs: settings.idleProbeMs,
    activeWindowMs: settings.activeWindowMs,
    tickMs: settings.tickMs,
    reaperMs: settings.reaperMs,
    ...DEFAULT_COMMAND_POLICY,
    ...DEFAULT_CLOSEOUT_POLICY,
    ...DEFAULT_LABEL_POLICY,
    // With no inbound connection no label webhook comes: a qa: label is read on the next tick, with no grace left to a webhook.
    ...(settings.runsReach === 'github' ? { labelSyncMs: settings.tickMs, labelGraceMs: 0 } : {}),
    ...DEFAULT_VISIBILITY_POLICY,
    dailyUsd: settings.dailyUsd,
    monthlyUsd: settings.monthlyUsd,
    newWorkShare: settings.newWorkShare,
  };
}

/**
 * The capabilities most of yoke's work needs: the store, GitHub, the time and the log. Each context that
 * adds to them (the fleet's, a pass's, the delivery half's) starts from this one.
 */
export interface Io {
  store: Store;
  forge: Forge;
  clock: Clock;
  log: Log;
  /** yoke's spans: OpenTelemetry's no-op unless tracing is on (absent: the no-op). */
  tracer?: Tracer;
}

/**
 * What the people-facing edges (commands, the HTTP API, run reports, the
 * fleet report) may use of the fleet. They ask for passes; they never run one.
 */
export interface FleetContext extends Io {
  /** TR12: this process's lease id: what it reserves or claims is recorded as its own. */
  processId: string;
  policy: FleetPolicy;
  /** GitHub's web pages (github.com, a GitHub Enterprise host, the sandbox's forge): where yoke's comments link. */
  webUrl: string;
  /** Asks for an early pass; does not wait for it. */
  kick(): void;
  /**
   * Something happened in this repository (a webhook, a command): it is active now, its reader (on whichever process)
   * is asked to read it again first, and a pass is asked for once that ask is recorded. Does not wait.
   */
  wake(repo: RepoName): void;
  /**
   * SC10: an installation's repositories changed (added, removed): its next listing is read from GitHub, not its last.
   * Resolves once the want is recorded, so a pass asked for after it, in any process, sees it.
   */
  relist(installationId: number): Promise<void>;
  /** Posts recorded verdicts not yet on GitHub, under the pass lock; does not wait. */
  postVerdicts(): void;
}
