import { forEachLimited } from '../../kernel/limit.js';
import { makeRefusal, type Refusal } from '../../kernel/codes/table.js';
import { environmentOf, type DeliverySettings } from '../../config/delivery.js';
import { refOfState } from '../../fleet/repo-state.js';
import type { EnvironmentRules, RepoRef } from '../../forge/types.js';
import type { EnvironmentCheck } from '../../store/delivery/stage-deployments.js';
import { deliveryRepoAt, type DeliveryContext } from '../context.js';
import { errorStack } from '../../kernel/error-text.js';

// DP05: yoke's QA gates a deploy stage only where GitHub holds the stage's
// jobs for yoke's rule. Each repository's gated environments are read through
// the environments API every so often; what is missing is kept in the store
// and shown in the fleet report, with the setting to make.

/** The deploy stages that follow a QA stage: the ones whose environment yoke's rule should hold. */
export function gatedStages(settings: DeliverySettings): { stage: string; environment: string }[] {
  const out: { stage: string; environment: string }[] = [];
  let gated = false;
  for (const s of settings.stages) {
    if (s.kind === 'qa') gated = true;
    else if (gated) out.push({ stage: s.name, environment: environmentOf(s) });
  }
  return out;
}

export type EnvironmentCode = EnvironmentCheck['code'];

/** DP05, pure: what each gated stage's environment lacks, given what GitHub said of it. */
export function judgeEnvironments(
  gated: readonly { stage: string; environment: string }[],
  rules: ReadonlyMap<string, EnvironmentRules>,
  appSlug: string,
): { stage: string; environment: string; code: EnvironmentCode }[] {
  return gated.map((g) => {
    const r = rules.get(g.environment);
    const code: EnvironmentCode =
      !r || !r.exists
        ? 'environment_missing'
        : r.ruleApps.includes(appSlug)
          ? 'environment_protected'
          : 'environment_rule_missing';
    return { ...g, code };
  });
}

/** A stored finding as the fleet report says it: what is wrong and the setting that fixes it. */
export function environmentWarning(c: EnvironmentCheck): Refusal {
  return makeRefusal(c.code, {
    repo: c.repo,
    stage: c.stage,
    environment: c.environment,
    app: c.app,
  });
}

/** Reads the gated environments of one repository and records what they lack. */
export async function checkEnvironments(
  ctx: DeliveryContext,
  repo: RepoRef,
  settings: DeliverySettings,
  appSlug: string,
): Promise<void> {
  const gated = gatedStages(settings);
  const rules = new Map<string, EnvironmentRules>();
  for (const env of new Set(gated.map((g) => g.environment)))
    rules.set(env, await ctx.forge.readEnvironmentRules(repo, env));
  const now = ctx.clock.now();
  await ctx.store.stageDeployments.recordEnvironmentChecks(
    repo.fullName,
    judgeEnvironments(gated, rules, appSlug).map((j) => ({ ...j, app: appSlug, checkedAt: now })),
  );
}

/** Every opted-in repository with delivery settings, at most every `everyMs`; one that fails is tried on the next round. */
export async function sweepEnvironments(ctx: DeliveryContext, everyMs: number): Promise<void> {
  const appSlug = (await ctx.forge.botLogin()).replace(/\[bot\]$/, '');
  const checked = new Map((await ctx.store.stageDeployments.environmentChecks()).map((c) => [c.repo, c.checkedAt]));
  const due = (await ctx.store.repos.list()).filter(
    (r) => ctx.clock.now() - (checked.get(r.fullName) ?? -Infinity) >= everyMs,
  );
  // SC01: the repositories are read together, bounded (each opt-in file comes from the reader's cache unless
  // it may have changed); the client's budget paces what reaches GitHub.
  await forEachLimited(due, ctx.policy.readConcurrency, async (r) => {
    const repo = refOfState(r);
    const dr = repo ? await deliveryRepoAt(ctx, repo) : null;
    if (!repo || !dr?.ok || gatedStages(dr.value.settings).length === 0) return;
    try {
      await checkEnvironments(ctx, repo, dr.value.settings, appSlug);
    } catch (err) {
      ctx.log.warn(
        { repo: r.fullName, err: errorStack(err) },
        "could not read the environments' protection rules; the next round tries again",
      );
    }
  });
}
