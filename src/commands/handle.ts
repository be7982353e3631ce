import { makeRefusal, type Refusal } from '../codes.js';
import type { Engine } from '../fleet/engine.js';
import { repoStatus, requestLand, requestStart, resetRepo, setAutoLoop, type ControlResult } from '../fleet/controls.js';
import type { CommentView, RepoRef } from '../forge/types.js';
import { COMMENT_LIMIT, parseComment } from './command.js';

export interface IncomingComment {
  repo: RepoRef;
  comment: CommentView;
  via: 'webhook' | 'poll';
}

const WRITE = new Set(['admin', 'maintain', 'write']);

export type CommandOutcome = 'not_a_command' | 'not_opted_in' | 'duplicate' | 'done' | 'refused';

function refusalText(r: Refusal): string {
  return `${r.message}\n\n**To recover:** ${r.recovery}`;
}

/**
 * GH04: a command counts only from users with write access or more, exactly
 * once per comment id (webhook or poll, whichever comes first), and always
 * gets a reaction and a reply.
 */
export async function handleComment(engine: Engine, { repo: repoRef, comment: c, via }: IncomingComment): Promise<CommandOutcome> {
  const parsed = parseComment(c.body);
  if (parsed.kind === 'none' || c.authorIsBot) return 'not_a_command';
  const { store, forge, clock, policy } = engine.deps;
  // GH01: a repository without the opt-in file is not touched, not even by a reply.
  const cfg = await forge.readConfig(repoRef, { maxAgeMs: policy.configRefreshMs });
  if (cfg.state === 'absent') return 'not_opted_in';
  const claimed = store.commands.claim({
    commentId: c.id,
    repo: repoRef.fullName,
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
    const permission = await forge.getPermission(repoRef, c.author);
    if (!WRITE.has(permission)) {
      result = { ok: false, refusal: makeRefusal('command_forbidden', { user: c.author, repo: repoRef.fullName }) };
    } else {
      const cmd = parsed.command;
      const repo = repoRef.fullName;
      switch (cmd.name) {
        case 'start':
          result = c.isPull
            ? { ok: false, refusal: makeRefusal('issue_not_found', { repo, number: c.issueNumber }) }
            : await requestStart(engine, repo, c.issueNumber, c.author);
          break;
        case 'land':
          result = await requestLand(engine, repo, c.issueNumber, c.author);
          break;
        case 'auto':
          result = await setAutoLoop(engine, repo, cmd.on);
          break;
        case 'reset':
          result = await resetRepo(engine, repo);
          break;
        case 'status':
          result = await repoStatus(engine, repo);
          break;
      }
    }
  }

  await forge.addReaction(repoRef, c.id, result.ok ? '+1' : 'confused');
  const reply = result.ok ? result.message : refusalText(result.refusal);
  await forge.createComment(repoRef, c.issueNumber, `@${c.author} ${reply}`);
  store.commands.finish(c.id, result.ok ? 'done' : result.refusal.code);
  return result.ok ? 'done' : 'refused';
}
