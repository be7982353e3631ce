import type { Permission } from '../forge/types.js';
import { ok, refuse, type Actor, type DeliveryContext, type DeliveryRepo, type Outcome } from './context.js';

// TR11: what a person's token may decide is what GitHub says its login may do
// on the repository, asked at the time of the decision.

export const WRITERS: ReadonlySet<Permission> = new Set(['admin', 'maintain', 'write']);
export const MAINTAINERS: ReadonlySet<Permission> = new Set(['admin', 'maintain']);

/** TR11: a maintainer's decision (a waiver, a removal) needs a person token whose login GitHub says has maintain or admin. */
export async function authorizeMaintainer(ctx: DeliveryContext, dr: DeliveryRepo, actor: Actor, action: string): Promise<Outcome<string>> {
  if (actor.role !== 'person') return refuse('person_token_required', { action, repo: dr.repo.fullName });
  const permission = await ctx.forge.getPermission(dr.repo, actor.login);
  return MAINTAINERS.has(permission) ? ok(actor.login) : refuse('maintain_required', { action, repo: dr.repo.fullName, login: actor.login, permission });
}

