import type { PullView } from '../../forge/types.js';
import type { ClaimRecord } from '../../store/fleet/claims.js';
import { isAfkKind, type Run } from '../../store/fleet/runs.js';
import { sameRepo } from '../../kernel/ids.js';

// TR04: which open PRs are claim PRs. A claim is yoke's own record, made for
// a PR whose head is a branch of the repository itself and that names, with
// its `Yoke-Run:` trailer, an unclaimed AFK run of the issue it closes. The
// `yoke:claim` label only displays it: a label added by hand grants nothing.

export const CLAIM_REFUSALS = [
  'no_trailer',
  'head_elsewhere',
  'unknown_run',
  'not_afk_run',
  'wrong_issue',
  'run_claimed',
] as const;
export type ClaimRefusal = (typeof CLAIM_REFUSALS)[number];

export type ClaimReading =
  { claimed: true; runId: string; issueNumber: number; recorded: boolean } | { claimed: false; why: ClaimRefusal };

export interface ClaimFacts {
  repo: { fullName: string };
  runs: readonly Run[];
  /** Claims recorded for this repository, by PR number. */
  claims: ReadonlyMap<number, ClaimRecord>;
  /** The repository's open PRs: when two name the same run, the first opened claims it. */
  view: { pulls: readonly PullView[] };
}

/** Whether this PR is a claim PR: recorded before, or qualifying now (it then counts in this very pass). */
export function readClaim(facts: ClaimFacts, pull: PullView): ClaimReading {
  const recorded = facts.claims.get(pull.number);
  if (recorded) return { claimed: true, runId: recorded.runId, issueNumber: recorded.issueNumber, recorded: true };
  if (pull.yokeRun === null) return { claimed: false, why: 'no_trailer' };
  if (!sameRepo(pull.headRepo, facts.repo.fullName)) return { claimed: false, why: 'head_elsewhere' };
  const run = facts.runs.find((r) => r.id === pull.yokeRun);
  if (!run) return { claimed: false, why: 'unknown_run' };
  if (!isAfkKind(run.kind) || run.issueNumber === null) return { claimed: false, why: 'not_afk_run' };
  if (!pull.closes.includes(run.issueNumber)) return { claimed: false, why: 'wrong_issue' };
  if ([...facts.claims.values()].some((c) => c.runId === run.id)) return { claimed: false, why: 'run_claimed' };
  const earlier = facts.view.pulls.some(
    (p) =>
      p.number < pull.number &&
      p.yokeRun === run.id &&
      sameRepo(p.headRepo, facts.repo.fullName) &&
      p.closes.includes(run.issueNumber!),
  );
  if (earlier) return { claimed: false, why: 'run_claimed' };
  return { claimed: true, runId: run.id, issueNumber: run.issueNumber, recorded: false };
}
