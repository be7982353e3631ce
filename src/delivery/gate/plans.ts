import { parsePlanFile, planIdOf } from '../../config/qa-plan.js';
import type { Forge, RepoRef } from '../../forge/types.js';
import type { PlanAtCommit } from './freeze.js';

// QA plans are read from the repository at the pinned commit, never from a
// working tree: what the run validates is what was merged.

export async function readPlansAt(
  forge: Forge,
  repo: RepoRef,
  commit: string,
  plansDir: string,
): Promise<Map<string, PlanAtCommit>> {
  const plans = new Map<string, PlanAtCommit>();
  for (const path of await forge.listFiles(repo, commit, plansDir)) {
    const id = planIdOf(plansDir, path);
    if (id === null) continue;
    const text = await forge.readFileAt(repo, path, commit);
    if (text === null) continue;
    const parsed = parsePlanFile(plansDir, path, text);
    plans.set(id, parsed.ok ? { ok: true, plan: parsed.plan } : parsed);
  }
  return plans;
}

/** Id and name of every plan that parsed, for resolving a reference (QA19). */
export const namedPlans = (plans: ReadonlyMap<string, PlanAtCommit>): { id: string; name: string }[] =>
  [...plans.values()].flatMap((p) => (p.ok ? [{ id: p.plan.id, name: p.plan.name }] : []));
