import { resolvePlanRef } from '../../config/qa-plan.js';
import type { RepoRef } from '../../forge/types.js';
import { qaAttached } from '../messages.js';
import { deliveryRepo, type DeliveryContext } from '../context.js';
import { ok, refuse, type Result } from '../../kernel/result.js';
import { namedPlans, readPlansAt } from './plans.js';
import { errorStack } from '../../kernel/error-text.js';

// Attaching a QA plan to an item: by a writer's `qa:<id-or-name>` label or
// `/yoke qa attach <id-or-name>`. The reference is resolved against the
// default branch now (QA19) and stored as an exact id; the label is a display.

export const QA_LABEL_PREFIX = 'qa:';

export async function attachPlan(
  ctx: DeliveryContext,
  { repo, issue }: { repo: RepoRef; issue: number },
  { ref, by, source }: { ref: string; by: string; source: 'label' | 'command' | 'api' },
): Promise<Result<{ planId: string; message: string }>> {
  const got = await deliveryRepo(ctx, repo.fullName);
  if (!got.ok) return got;
  const dr = got.value;
  const head = await ctx.forge.resolveCommit(repo, 'HEAD');
  if (!head) return refuse('deployment_commit_unknown', { repo: repo.fullName, commit: 'HEAD' });
  const plans = await readPlansAt(ctx.forge, repo, head, dr.settings.plans_dir);
  const r = resolvePlanRef(ref, namedPlans(plans));
  if (!r.ok) {
    // A plan that is there but does not parse is named as such, with its field: never "no such plan".
    const broken = plans.get(ref.replace(/\.ya?ml$/, ''));
    if (r.reason === 'unknown' && broken && !broken.ok)
      return refuse('qa_plan_invalid', { ref, path: broken.path, field: broken.field, detail: broken.detail });
    return r.reason === 'ambiguous'
      ? refuse('qa_plan_ambiguous', { ref, ids: r.ids })
      : refuse('qa_plan_unknown', {
          ref,
          known: r.known,
          where: `${dr.settings.plans_dir} on the default branch of ${repo.fullName}`,
        });
  }
  const fresh = await ctx.store.qa.attach({
    repo: repo.fullName,
    issueNumber: issue,
    planId: r.id,
    attachedBy: by,
    source,
    attachedAt: ctx.clock.now(),
  });
  if (source !== 'label' && fresh) {
    try {
      await ctx.forge.addLabels(repo, issue, [`${QA_LABEL_PREFIX}${r.id}`]);
    } catch (err) {
      ctx.log.warn(
        { repo: repo.fullName, issue, err: errorStack(err) },
        'could not add the qa label; the attachment is recorded',
      );
    }
  }
  return ok({ planId: r.id, message: qaAttached(dr.item(issue), r.id, fresh) });
}
