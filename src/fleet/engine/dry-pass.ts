import type { Candidate } from '../candidate.js';
import { openingLedger } from '../money/ledger.js';
import { moneyFor } from '../runs/launch.js';
import { gatherPass, type PassDeps } from '../spawn/gather.js';
import { planNextPass, type NextPass } from '../spawn/next-pass.js';
import { spawnPass, type LaunchAttempt } from '../spawn/spawn-pass.js';
import { ok, refuse, type Result } from '../../kernel/result.js';
import { sameRepo } from '../../kernel/ids.js';

// `yoke plan`: the next pass, read as a pass reads and decided as it decides, launching and writing nothing.

/** What the next pass would do for one repository, and why not for the rest. Call under the pass lock. */
export async function dryPass(deps: PassDeps, repo: string): Promise<Result<NextPass>> {
  const gathered = await gatherPass(deps);
  const ref = gathered.repos.find((r) => sameRepo(r.fullName, repo));
  if (!ref) return refuse('repo_not_installed', { repo });
  const cfg = await deps.forge.readConfig(ref, { maxAgeMs: deps.policy.configRefreshMs });
  if (cfg.state === 'absent') return refuse('repo_not_opted_in', { repo: ref.fullName });
  if (cfg.state === 'invalid') return refuse('repo_disabled', { repo: ref.fullName, detail: cfg.reason });
  // BU01: money as the pass would spend it: what the budgets cannot cover waits, named.
  const money = {
    budgets: deps.policy,
    ledger: await openingLedger(deps.store, deps.clock.now()),
    clock: deps.clock,
  };
  const yes = async (c: Candidate): Promise<LaunchAttempt> => {
    const facts = await gathered.facts.get(c.repo);
    const { reserve, shed } = facts ? moneyFor(c, facts, money) : { reserve: null, shed: null };
    if (shed) return { kind: 'over_budget', why: shed };
    if (reserve) money.ledger.add(c.repo, c.kind, reserve);
    return { kind: 'launched', runId: '' };
  };
  const { outcomes } = await spawnPass(gathered.candidates, gathered.snapshot, deps.policy, yes, deps.rotation);
  const facts = (await gathered.facts.get(ref.fullName)) ?? null;
  return ok(planNextPass({ repo: ref.fullName, gathered, outcomes, facts, policy: deps.policy }));
}
