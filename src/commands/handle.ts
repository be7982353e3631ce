import type { CommandAt } from './at.js';
import { makeRefusal } from '../kernel/codes/table.js';
import type { FleetContext } from '../fleet/context.js';
import type { Result } from '../kernel/result.js';
import type { CommentView, RepoRef } from '../forge/types.js';
import { canWrite, type Permission } from '../kernel/permission.js';
import { commandReply, refusalText } from '../kernel/reply.js';
import type { RepoState } from '../store/fleet/repos.js';
import { COMMENT_LIMIT, parseComment, runCommand, suggestCommand, type ParsedComment } from './command.js';
import { noteReply } from './qa.js';
import { errorStack, errorText } from '../kernel/error-text.js';

export interface IncomingComment {
  repo: RepoRef;
  comment: CommentView;
  via: 'webhook' | 'poll';
}

export type CommandOutcome =
  'not_a_command' | 'not_opted_in' | 'duplicate' | 'edited' | 'done' | 'refused' | 'ignored' | 'failed';

/**
 * Found by poll, a comment counts only as first written (TR05: an edit does not
 * make a command) and only if written since yoke first saw the repository, to
 * the second (GitHub's times have no milliseconds: one written in the second
 * yoke first looked counts).
 */
export const isPollable = (
  comment: Pick<CommentView, 'createdAt' | 'updatedAt'>,
  state: Pick<RepoState, 'firstSeenAt'>,
): boolean =>
  comment.createdAt >= Math.floor(state.firstSeenAt / 1000) * 1000 && comment.updatedAt <= comment.createdAt;

/**
 * GH04/TR05: a command counts only from users with write access or more,
 * exactly once per comment id (webhook or poll, whichever comes first), and a
 * writer always gets a reaction and a reply. Someone without write access
 * makes yoke write nothing at all. A command whose handling throws is tried
 * again on a later poll and, once its attempts are spent, answered.
 */
export async function handleComment(
  ctx: FleetContext,
  { repo, comment: c, via }: IncomingComment,
): Promise<CommandOutcome> {
  const parsed = parseComment(c.body);
  // A reply or a command on a notice's thread by its recipient answers it.
  if (!c.authorIsBot && c.updatedAt <= c.createdAt) await noteReply(ctx, repo, c);
  if (parsed.kind === 'none' || c.authorIsBot) return 'not_a_command';
  if (c.updatedAt > c.createdAt) return 'edited';
  const { store, forge, clock, policy } = ctx;
  // GH01: a repository without the opt-in file is not touched, not even by a reply.
  const cfg = await forge.readConfig(repo, { maxAgeMs: policy.configRefreshMs });
  if (cfg.state === 'absent') return 'not_opted_in';
  const claimed = await store.commands.claim(
    {
      commentId: c.id,
      repo: repo.fullName,
      issueNumber: c.issueNumber,
      author: c.author,
      body: c.body.slice(0, 200),
      receivedVia: via,
      processedAt: clock.now(),
    },
    { maxAttempts: policy.commandAttempts, staleMs: policy.commandStaleMs },
  );
  if (!claimed) return 'duplicate';

  let permission: Permission;
  let result: Result<string>;
  try {
    permission = await forge.getPermission(repo, c.author);
    if (!canWrite(permission)) {
      await store.commands.finish(c.id, 'command_forbidden');
      ctx.log.info(
        { repo: repo.fullName, comment: c.id, author: c.author, permission },
        'command from a user without write access; not answered',
      );
      return 'ignored';
    }
    result = await decide({ ctx, repo, comment: c, permission }, parsed);
  } catch (err) {
    return failed(ctx, repo, c, err);
  }
  // The answer is written once the command took effect; if writing it fails, the poll answers it again.
  try {
    await forge.addReaction(repo, c.id, result.ok ? '+1' : 'confused');
    await forge.createComment(
      repo,
      c.issueNumber,
      commandReply(c.author, result.ok ? result.value : refusalText(result.refusal)),
    );
  } catch (err) {
    return failed(ctx, repo, c, err);
  }
  await store.commands.finish(c.id, result.ok ? 'done' : result.refusal.code);
  return result.ok ? 'done' : 'refused';
}

function decide(at: CommandAt, parsed: Exclude<ParsedComment, { kind: 'none' }>): Promise<Result<string>> {
  if (parsed.kind === 'too_large')
    return Promise.resolve({ ok: false, refusal: makeRefusal('comment_too_large', { limit: COMMENT_LIMIT }) });
  if (parsed.kind === 'unknown')
    return Promise.resolve({
      ok: false,
      refusal: makeRefusal('command_unknown', { command: parsed.text, suggestion: suggestCommand(parsed.text) }),
    });
  return runCommand(at, parsed.command);
}

/** Marks the command failed so a later poll tries it again; the last attempt answers the commenter. */
async function failed(ctx: FleetContext, repo: RepoRef, c: CommentView, err: unknown): Promise<CommandOutcome> {
  const detail = errorText(err);
  await ctx.store.commands.fail(c.id, detail);
  const attempts = (await ctx.store.commands.get(c.id))?.attempts ?? 1;
  ctx.log.warn(
    { repo: repo.fullName, comment: c.id, attempts, err: detail },
    'command failed; a later poll tries it again',
  );
  if (attempts < ctx.policy.commandAttempts) return 'failed';
  const command = c.body.trimStart().split(/\r?\n/, 1)[0]!.slice(0, 80);
  try {
    await ctx.forge.addReaction(repo, c.id, 'confused');
    await ctx.forge.createComment(
      repo,
      c.issueNumber,
      commandReply(c.author, refusalText(makeRefusal('command_failed', { command, attempts, detail }))),
    );
    await ctx.store.commands.finish(c.id, 'command_failed');
  } catch (replyErr) {
    ctx.log.warn(
      { repo: repo.fullName, comment: c.id, err: errorStack(replyErr) },
      'could not answer a failed command',
    );
  }
  return 'failed';
}

/** Commands found by the pass's poll of a repository's comments; failed ones are tried again. */
export async function handlePolledComments(
  ctx: FleetContext,
  repo: RepoRef,
  comments: readonly CommentView[],
): Promise<void> {
  // SC10: a repository with no new comment (every idle one) costs the pass no store read here.
  if (comments.length === 0) return;
  const state = await ctx.store.repos.get(repo.fullName);
  if (!state) return;
  for (const c of comments) {
    if (!isPollable(c, state)) continue;
    const known = await ctx.store.commands.get(c.id);
    if (!known || known.state !== 'done') await handleComment(ctx, { repo, comment: c, via: 'poll' });
  }
}
