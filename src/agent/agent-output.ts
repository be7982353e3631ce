// What yoke makes of what an agent wrote or printed before it keeps it: the title in the agent's
// commit (TR23), and the cost the agent's output states (TR37).

/**
 * The title as a commit's subject: anyone who can edit the issue wrote it, and a closing keyword and
 * a reference in a commit message (`Fixes #12`) close that issue when the commit lands. The reference is
 * broken (`Fixes # 12`), the words kept.
 */
export const inertTitle = (title: string): string =>
  title.replace(/\b(close[sd]?|fix(?:e[sd])?|resolve[sd]?)(\s*:?\s+)((?:[\w.-]+\/[\w.-]+)?#)(\d+)/gi, '$1$2$3 $4');

/**
 * TR37: what the run cost, as recorded: never past the run's limit. The agent CLI's own limit stops it
 * there; a higher figure is something a tool printed where the CLI's output goes, and counts at the limit.
 */
export function cappedCost<C extends { usd: number | null; note: string | null }>(c: C, maxUsd: number | null): C {
  if (c.usd === null || maxUsd === null || c.usd <= maxUsd) return c;
  return {
    ...c,
    usd: maxUsd,
    note: `the agent's output stated $${c.usd}, past the run's limit of $${maxUsd}: recorded at the limit`,
  };
}
