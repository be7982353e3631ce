import type { Forge } from '../../forge/types.js';
import type { Run } from '../../store/fleet/runs.js';
import { flakyNote, reviewHoldNote, spendLine, verdictComment } from '../notices/messages.js';
import { repoRefOf } from '../repo-state.js';
import { flippedVerdict } from '../spawn/verdicts.js';
import { readersAmong } from './autoland.js';
import type { Io } from '../context.js';
import { blockingReviewers } from '../spawn/protected-paths.js';
import { errorStack } from '../../kernel/error-text.js';

// TR01: each lander's verdict, posted once as its marker comment on the PR: the head and the base it judged
// (LD01), what the work cost so far, a flaky validation (LD06), and whose approval the merge still waits for (TR33).

/** Posts lander verdicts as marker comments; idempotent through runs.verdict_comment_id. */
export async function postVerdict(deps: Io, run: Run, repo: Parameters<Forge['createComment']>[0]): Promise<void> {
  if (!run.verdict || run.verdictCommentId !== null || run.prNumber === null || !run.headSha) return;
  const spend = spendLine(
    run.issueNumber ? `#${run.issueNumber}` : `#${run.prNumber}`,
    await deps.store.spend.ofWork(run.repo, run.issueNumber, run.prNumber),
  );
  // TR33: an accepted head still waits for whoever requested changes; the verdict says so, once.
  const requesters =
    run.verdict === 'accept'
      ? blockingReviewers(await deps.forge.listReviews(repo, run.prNumber), (login) => login.endsWith('[bot]'))
      : [];
  const readers = await readersAmong(deps.forge, repo, requesters);
  const waitsFor = requesters.filter((login) => !readers.includes(login));
  // LD06: a re-run that reversed a reject says the validation is flaky.
  const runs = run.verdict === 'accept' ? await deps.store.runs.listForRepo(run.repo) : [];
  const merges = run.verdict === 'accept' ? await deps.store.merges.listForRepo(run.repo) : [];
  const flipped = flippedVerdict({ runs, merges }, run);
  const rejected = flipped
    ? runs
        .filter(
          (r) =>
            r.kind === 'lander' && r.prNumber === run.prNumber && r.headSha === run.headSha && r.verdict === 'reject',
        )
        .at(-1)
    : undefined;
  const id = await deps.forge.createComment(
    repo,
    run.prNumber,
    verdictComment({ run: run.id, sha: run.headSha, verdict: run.verdict }, run.summary, {
      spend,
      base: run.baseSha,
      ahead: run.stack.map((m) => m.pr),
    }) +
      (rejected ? `\n\n${flakyNote(rejected.id)}` : '') +
      (waitsFor.length ? `\n\n${reviewHoldNote(waitsFor)}` : ''),
  );
  await deps.store.runs.setVerdictComment(run.id, id);
}

/** Every reported verdict whose marker is not yet posted; a failure is retried next pass. Call under the pass lock. */
export async function postPendingVerdicts(deps: Io): Promise<void> {
  for (const run of await deps.store.runs.listUnpostedVerdicts()) {
    const repo = await repoRefOf(deps.store, run.repo);
    if (!repo) continue;
    try {
      await postVerdict(deps, run, repo);
    } catch (err) {
      deps.log.warn({ run: run.id, err: errorStack(err) }, 'could not post the verdict marker; retried next pass');
    }
  }
}
