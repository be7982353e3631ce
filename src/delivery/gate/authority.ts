import { canMaintain } from '../../kernel/permission.js';
import { type Actor, type DeliveryContext, type DeliveryRepo } from '../context.js';
import { ok, refuse, type Result } from '../../kernel/result.js';

// TR11: what a person's token may decide is what GitHub says its login may do
// on the repository, asked at the time of the decision.

/** TR11: a maintainer's decision (a waiver, a removal) needs a person token whose login GitHub says has maintain or admin. */
export async function authorizeMaintainer(
  ctx: DeliveryContext,
  dr: DeliveryRepo,
  actor: Actor,
  /** What is asked, and the comment command on the tracking issue that does the same, where there is one. */
  { action, command: comment = null }: { action: string; command?: string | null },
): Promise<Result<string>> {
  if (actor.role !== 'person') return refuse('person_token_required', { action, repo: dr.repo.fullName, comment });
  const permission = await ctx.forge.getPermission(dr.repo, actor.login);
  return canMaintain(permission)
    ? ok(actor.login)
    : refuse('maintain_required', { action, repo: dr.repo.fullName, login: actor.login, permission, comment });
}
