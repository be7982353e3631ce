import type { RepoConfig } from '../../config/repo-config.js';
import type { IssueGraph } from '../../forge/types.js';
import { makeRefusal, type Refusal } from '../../kernel/codes/table.js';
import type { RunKind } from '../../store/fleet/runs.js';
import {
  budgetLines,
  budgetWait,
  overBudget,
  reservationFor,
  type BudgetLedger,
  type FleetBudgets,
} from './budgets.js';
import { effectiveCap, type CapPolicy } from '../cap.js';

// One wait, said the same everywhere: what a person's `/yoke start` or `/yoke land` (and `yoke repo start`)
// meets now, decided as the pass decides it, in the pass's order: what GitHub's issue graph holds back, the
// cap, then money. The reply says it with the same code, message and recovery as `yoke plan`, the dashboard
// and the dashboard issue. Pure: the store's and GitHub's figures in, the wait (or none) out.

export interface QueuedWork {
  repo: string;
  kind: RunKind;
  /** For a start: the issue, and what GitHub's issue graph says of it. */
  issue?: { number: number; graph: IssueGraph | undefined };
  config: Pick<RepoConfig, 'budget' | 'agent' | 'afk_label'>;
}

export interface QueuedWaitFacts {
  policy: CapPolicy & FleetBudgets;
  /** Live runs now, fleet-wide: the cap counts them all. */
  liveCount: number;
  ledger: BudgetLedger;
  now: number;
}

/** The wait the pass would give this work now, or null: it launches on the next pass. */
export function queuedWait(w: QueuedWork, f: QueuedWaitFacts): Refusal | null {
  const g = w.issue?.graph;
  if (w.issue && g?.blockedBy)
    return makeRefusal('issue_blocked', {
      repo: w.repo,
      number: w.issue.number,
      blockers: `${g.blockedBy} open issue${g.blockedBy === 1 ? '' : 's'}`,
    });
  if (w.issue && g?.openSubIssues)
    return makeRefusal('issue_has_sub_issues', {
      repo: w.repo,
      number: w.issue.number,
      open: g.openSubIssues,
      label: w.config.afk_label,
    });
  const cap = effectiveCap(f.policy, w.repo);
  if (f.liveCount >= cap) return makeRefusal('at_cap', { repo: w.repo, live: f.liveCount, cap });
  const lines = budgetLines(w.repo, w.config.budget, f.policy, w.kind, f.now);
  const reserve = reservationFor(w.kind, w.config.agent.max_usd, lines) ?? 0;
  const over = overBudget(lines, (l) => f.ledger.charged(l), reserve);
  return over ? budgetWait(w.repo, over, reserve, f.ledger.holders(over.line)) : null;
}
