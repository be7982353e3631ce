import { makeRefusal } from '../codes.js';
import type { FleetContext } from '../fleet/context.js';
import { repoStatus, requestLand, requestStart, resetRepo, setAutoLoop, type ControlResult } from '../fleet/controls.js';
import type { CommentView, Permission, RepoRef } from '../forge/types.js';
import { commandReply, refusalText } from '../messages.js';
import type { RepoState } from '../store/repos.js';
import { COMMENT_LIMIT, parseComment, type CommandWord } from './command.js';

export interface IncomingComment {
  repo: RepoRef;
  comment: CommentView;
  via: 'webhook' | 'poll';
}

const WRITE: ReadonlySet<Permission> = new Set(['admin', 'maintain', 'write']);

export type CommandOutcome = 'not_a_command' | 'not_opted_in' | 'duplicate' | 'done' | 'refused';

/** Only commands written since yoke first saw the repo count when found by poll; older history is not replayed. */
export const isPollable = (comment: Pick<CommentView, 'createdAt'>, state: Pick<RepoState, 'firstSeenAt'>): boolean =>
  comment.createdAt >= state.firstSeenAt;

/**
 * GH04: a command counts only from users with write access or more, exactly
 * once per comment id (webhook or poll, whichever comes first), and always
 * gets a reaction and a reply.
 */
export async function handleComment(ctx: FleetContext, { repo, comment: c, via }: IncomingComment): Promise<CommandOutcome> {
  const parsed = parseComment(c.body);
  if (parsed.kind === 'none' || c.authorIsBot) return 'not_a_command';
  const { store, forge, clock, policy } = ctx;
  // GH01: a repository without the opt-in file is not touched, not even by a reply.
  const cfg = await forge.readConfig(repo, { maxAgeMs: policy.configRefreshMs });
  if (cfg.state === 'absent') return 'not_opted_in';
  const claimed = store.commands.claim({
    commentId: c.id,
    repo: repo.fullName,
    issueNumber: c.issueNumber,
    author: c.author,
    body: c.body.slice(0, 200),
    receivedVia: via,
    processedAt: clock.now(),
  });
  if (!claimed) return 'duplicate';

  let result: ControlResult;
  if (parsed.kind === 'too_large') {
    result = { ok: false, refusal: makeRefusal('comment_too_large', { limit: COMMENT_LIMIT }) };
  } else if (parsed.kind === 'unknown') {
    result = { ok: false, refusal: makeRefusal('command_unknown', { command: parsed.text }) };
  } else {
    const permission = await forge.getPermission(repo, c.author);
    result = WRITE.has(permission)
      ? await runCommand(ctx, repo, c, parsed.command)
      : { ok: false, refusal: makeRefusal('command_forbidden', { repo: repo.fullName, permission }) };
  }

  await forge.addReaction(repo, c.id, result.ok ? '+1' : 'confused');
  await forge.createComment(repo, c.issueNumber, commandReply(c.author, result.ok ? result.message : refusalText(result.refusal)));
  store.commands.finish(c.id, result.ok ? 'done' : result.refusal.code);
  return result.ok ? 'done' : 'refused';
}

function runCommand(ctx: FleetContext, repo: RepoRef, c: CommentView, cmd: CommandWord): Promise<ControlResult> {
  const name = repo.fullName;
  switch (cmd.name) {
    case 'start':
      return c.isPull
        ? Promise.resolve({ ok: false, refusal: makeRefusal('issue_not_found', { repo: name, number: c.issueNumber }) })
        : requestStart(ctx, name, c.issueNumber, c.author);
    case 'land':
      return requestLand(ctx, name, c.issueNumber, c.author);
    case 'auto':
      return setAutoLoop(ctx, name, cmd.on);
    case 'reset':
      return resetRepo(ctx, name);
    case 'status':
      return repoStatus(ctx, name);
  }
}

/** Commands found by the pass's poll of a repository's newest comments. */
export async function handlePolledComments(ctx: FleetContext, repo: RepoRef, comments: readonly CommentView[]): Promise<void> {
  const state = ctx.store.repos.get(repo.fullName);
  if (!state) return;
  for (const c of comments) {
    if (isPollable(c, state) && !ctx.store.commands.get(c.id)) await handleComment(ctx, { repo, comment: c, via: 'poll' });
  }
}
