import type { RepoName } from '../forge/types.js';

// SC02: poll tiers. A repository is active while it has a live run, an open
// claim PR, an open request, or was woken recently (a webhook, a command, a
// kick); an active repository is probed every pass, an idle one only every
// idleProbeMs, and between probes a pass uses its last polled view.

export interface ActivitySignals {
  liveRuns: number;
  openRequests: number;
  /** Whether the last view of it had an open claim PR. */
  openClaims: boolean;
  /** When it was last woken, or null. */
  wokenAt: number | null;
}

export interface TierPolicy {
  idleProbeMs: number;
  activeWindowMs: number;
}

export function isActive(s: ActivitySignals, now: number, policy: TierPolicy): boolean {
  return (
    s.liveRuns > 0 ||
    s.openRequests > 0 ||
    s.openClaims ||
    (s.wokenAt !== null && now - s.wokenAt < policy.activeWindowMs)
  );
}

/** How old a cached view of this repository may be and still be used instead of a probe. */
export function viewMaxAgeMs(s: ActivitySignals, now: number, policy: TierPolicy): number {
  return isActive(s, now, policy) ? 0 : policy.idleProbeMs;
}

/** What the engine remembers between passes about each repository's activity (lost on restart: then everything is probed). */
export class RepoActivity {
  private woken = new Map<RepoName, number>();
  private claims = new Set<RepoName>();

  wake(repo: RepoName, now: number): void {
    this.woken.set(repo, now);
  }

  wokenAt(repo: RepoName): number | null {
    return this.woken.get(repo) ?? null;
  }

  setOpenClaims(repo: RepoName, open: boolean): void {
    if (open) this.claims.add(repo);
    else this.claims.delete(repo);
  }

  hasOpenClaims(repo: RepoName): boolean {
    return this.claims.has(repo);
  }
}
