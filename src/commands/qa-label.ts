import type { FleetContext } from '../fleet/context.js';
import type { Permission } from '../forge/types.js';
import { commandReply, refusalText } from '../messages.js';
import { attachPlan, QA_LABEL_PREFIX } from '../qa/attach.js';
import type { IssueLabeledPayload } from '../webhooks/payloads.js';

const WRITE: ReadonlySet<Permission> = new Set(['admin', 'maintain', 'write']);

/**
 * A `qa:<id-or-name>` label attaches a plan only when a writer added it, and
 * the writer gets a reply. A non-writer's label makes yoke write nothing
 * (TR05), as a non-writer's command does. yoke's own labels (it adds one for
 * every command attachment) are displays, not attachments.
 */
export async function handleQaLabel(ctx: FleetContext, e: IssueLabeledPayload): Promise<'ignored' | 'attached' | 'refused'> {
  if (!e.label.startsWith(QA_LABEL_PREFIX) || e.isPull || e.senderIsBot) return 'ignored';
  const cfg = await ctx.forge.readConfig(e.repo, { maxAgeMs: ctx.policy.configRefreshMs });
  if (cfg.state === 'absent') return 'ignored';
  const ref = e.label.slice(QA_LABEL_PREFIX.length);
  const permission = await ctx.forge.getPermission(e.repo, e.sender);
  if (!WRITE.has(permission)) {
    ctx.log.info({ repo: e.repo.fullName, issue: e.issueNumber, sender: e.sender, permission }, 'qa label from a non-writer ignored');
    return 'refused';
  }
  const result = await attachPlan(ctx, e.repo, e.issueNumber, ref, e.sender, 'label');
  await ctx.forge.createComment(e.repo, e.issueNumber, commandReply(e.sender, result.ok ? result.value.message : refusalText(result.refusal)));
  return result.ok ? 'attached' : 'refused';
}
