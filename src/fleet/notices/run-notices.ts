import { redactSecrets } from '../../kernel/redact.js';
import { runFailedNotice, runFailureOverNotice } from './messages.js';
import type { RunNoticeRecord } from '../../store/fleet/run-notices.js';
import { isAfkKind, type Run } from '../../store/fleet/runs.js';
import { runUrl } from './links.js';
import { repoRefOf } from '../repo-state.js';
import { errorStack } from '../../kernel/error-text.js';
import type { Io } from '../context.js';

// A failed or timed-out AFK or fix run says so where people look: one comment
// on its issue (AFK) or claim PR (fix), with what it reported and the
// recovery, edited in place for the next failure there. Planned from the
// store's runs and what was last written, written only when that changes.

/** Failures older than this are not announced any more (a restart on an old store posts nothing stale). */
const FOLLOW_MS = 7 * 86_400_000;

export interface RunNoticeAction {
  repo: string;
  thread: number;
  runId: string;
  commentId: number | null;
  body: string;
  /** A notice marked over edits the comment there is; one that is gone stays gone. */
  editOnly: boolean;
}

const threadOf = (r: Run): number | null => (isAfkKind(r.kind) ? r.issueNumber : r.kind === 'fix' ? r.prNumber : null);

/** Pure: the comments to create or edit, from every run and the notices already written. */
export function planRunNotices(
  runs: readonly Run[],
  written: readonly RunNoticeRecord[],
  opts: { now: number; webUrl: string },
): RunNoticeAction[] {
  const byThread = new Map<string, Run[]>();
  for (const r of runs) {
    const t = threadOf(r);
    if (t === null || r.status !== 'ended') continue;
    const key = `${r.repo}#${t}#${isAfkKind(r.kind) ? 'afk' : 'fix'}`;
    byThread.set(key, [...(byThread.get(key) ?? []), r]);
  }
  const shown = new Map(written.map((w) => [`${w.repo}#${w.thread}`, w]));
  const out: RunNoticeAction[] = [];
  for (const list of byThread.values()) {
    const ended = [...list].sort((a, b) => (a.endedAt ?? 0) - (b.endedAt ?? 0));
    const last = ended.at(-1)!;
    const thread = threadOf(last)!;
    const prior = shown.get(`${last.repo}#${thread}`);
    if (prior?.runId === last.id) continue;
    // A later run succeeded: the comment that says the last one failed is marked over, so no one acts on it.
    const shownRun = prior && ended.find((r) => r.id === prior.runId);
    if (last.outcome === 'success' && prior && shownRun && shownRun.outcome !== 'success') {
      out.push({
        repo: last.repo,
        thread,
        runId: last.id,
        commentId: prior.commentId,
        editOnly: true,
        body: runFailureOverNotice({
          kind: isAfkKind(last.kind) ? 'afk' : 'fix',
          failedRunId: prior.runId,
          runId: last.id,
          link: runUrl(opts.webUrl, last),
        }),
      });
      continue;
    }
    // A run cancelled by yoke itself (never started, say) is not a failure to announce.
    if ((last.outcome !== 'failure' && last.outcome !== 'timeout') || opts.now - (last.endedAt ?? 0) > FOLLOW_MS)
      continue;
    const why = redactSecrets(last.summary?.trim() || last.outcomeReason || 'it ended without saying why');
    const failures = ended.filter((r) => r.outcome === 'failure' || r.outcome === 'timeout').length;
    out.push({
      repo: last.repo,
      thread,
      runId: last.id,
      commentId: prior?.commentId ?? null,
      editOnly: false,
      body: runFailedNotice({
        kind: isAfkKind(last.kind) ? 'afk' : 'fix',
        runId: last.id,
        outcome: last.outcome,
        why,
        failures,
        link: runUrl(opts.webUrl, last),
        askedBy: last.kind === 'fix' && last.why?.includes(' by @') ? asksPart(last.why) : null,
      }),
    });
  }
  return out;
}

/** Writes what the plan says; a comment deleted by someone is posted again. */
export async function syncRunNotices(deps: Io & { webUrl: string }): Promise<number> {
  const { store, forge, log } = deps;
  const since = deps.clock.now() - FOLLOW_MS;
  const runs = (await store.runs.listAll(2000)).filter((r) => (r.endedAt ?? r.launchedAt) >= since);
  let written = 0;
  for (const a of planRunNotices(runs, await store.runNotices.list(), { now: deps.clock.now(), webUrl: deps.webUrl })) {
    const repo = await repoRefOf(store, a.repo);
    if (!repo) continue;
    try {
      const edited = a.commentId !== null && (await forge.editComment(repo, a.commentId, a.body));
      if (!edited && a.editOnly) {
        await store.runNotices.record(
          { repo: a.repo, thread: a.thread, commentId: a.commentId!, runId: a.runId },
          deps.clock.now(),
        );
        continue;
      }
      const commentId = edited ? a.commentId! : await forge.createComment(repo, a.thread, a.body);
      await store.runNotices.record({ repo: a.repo, thread: a.thread, commentId, runId: a.runId }, deps.clock.now());
      written++;
    } catch (err) {
      log.warn(
        { repo: a.repo, thread: a.thread, run: a.runId, err: errorStack(err) },
        'could not post the failed-run notice; retried next pass',
      );
    }
  }
  return written;
}

/** The part of a fix run's why that people asked for (its asks, without the lander's rejection). */
const asksPart = (why: string): string =>
  why
    .split('; ')
    .filter((p) => p.includes(' by @'))
    .join('; ');
