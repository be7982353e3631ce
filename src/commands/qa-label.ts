import { makeRefusal } from '../codes.js';
import type { FleetContext } from '../fleet/context.js';
import type { Permission } from '../forge/types.js';
import { commandReply, refusalText } from '../messages.js';
import { attachPlan, QA_LABEL_PREFIX } from '../qa/attach.js';
import type { IssueLabeledPayload } from '../webhooks/payloads.js';

const WRITE: ReadonlySet<Permission> = new Set(['admin', 'maintain', 'write']);

/**
 * A `qa:<id-or-name>` label attaches a plan only when a writer added it; the
 * labeller gets a reply either way. yoke's own labels (it adds one for every
 * command attachment) are displays, not attachments.
 */
export async function handleQaLabel(ctx: FleetContext, e: IssueLabeledPayload): Promise<'ignored' | 'attached' | 'refused'> {
  if (!e.label.startsWith(QA_LABEL_PREFIX) || e.isPull || e.senderIsBot) return 'ignored';
  const cfg = await ctx.forge.readConfig(e.repo, { maxAgeMs: ctx.policy.configRefreshMs });
  if (cfg.state === 'absent') return 'ignored';
  const ref = e.label.slice(QA_LABEL_PREFIX.length);
  const permission = await ctx.forge.getPermission(e.repo, e.sender);
  const result = WRITE.has(permission)
    ? await attachPlan(ctx, e.repo, e.issueNumber, ref, e.sender, 'label')
    : { ok: false as const, refusal: makeRefusal('command_forbidden', { repo: e.repo.fullName, permission }) };
  await ctx.forge.createComment(e.repo, e.issueNumber, commandReply(e.sender, result.ok ? result.value.message : refusalText(result.refusal)));
  return result.ok ? 'attached' : 'refused';
}
