import type { Forge, ReviewView } from '../forge/types.js';
import type { Log } from '../log.js';
import { owedLabelOf } from '../config/delivery.js';
import { recordDeliveryOwed } from '../qa/owed.js';
import { fixExhaustedNotice, mergeRefusedNotice, spendLine, verdictComment } from '../messages.js';
import type { Store } from '../store/store.js';
import type { Run } from '../store/runs.js';
import { pullSubject, subjectKey } from './candidate.js';
import { shouldSpawnFix } from './producers.js';
import { readClaim } from './claims.js';
import { CLAIM_LABEL, STUCK_LABEL, type RepoFacts } from './repo-facts.js';
import { repoRefOf } from './repo-state.js';
import { isLandable, untrustedMarkers, verdictAtHead } from './verdicts.js';

// What a pass does besides launching, decided purely from RepoFacts:
// record claims (and label them, for display), merge heads whose recorded
// verdict is accept, and tell maintainers when fix-forward has run out.
// Executed after the decisions.

export type RepoAction =
  | { type: 'record_claim'; pr: number; run: string; issue: number }
  | { type: 'label_claim'; pr: number; run: string }
  | { type: 'merge'; pr: number; sha: string; method: 'merge' | 'squash' | 'rebase'; run: string }
  | { type: 'fix_exhausted'; pr: number; attempts: number }
  | { type: 'ignored_marker'; pr: number; commentId: number; author: string; reason: string };

export interface AfterLaunch {
  /** Live subjects once this pass's launches are counted (a lander just launched holds its PR's merge). */
  liveSubjects: ReadonlySet<string>;
  /** Whether the merge this verdict run leads to was already attempted (merged, or refused on this same verdict). */
  attempted(pr: number, sha: string, verdictRun: string): boolean;
}

export function planRepoActions(facts: RepoFacts, after: AfterLaunch): RepoAction[] {
  const actions: RepoAction[] = [];
  for (const pull of facts.view.pulls) {
    const claim = readClaim(facts, pull);
    if (!claim.claimed) continue;
    if (!claim.recorded) actions.push({ type: 'record_claim', pr: pull.number, run: claim.runId, issue: claim.issueNumber });
    if (!pull.labels.includes(CLAIM_LABEL)) actions.push({ type: 'label_claim', pr: pull.number, run: claim.runId });
  }
  for (const claim of facts.view.claims) {
    for (const ig of untrustedMarkers(facts, claim.pull.number, claim.comments)) actions.push({ type: 'ignored_marker', pr: claim.pull.number, ...ig });
    if (!isLandable(facts, claim)) continue;
    const n = claim.pull.number;
    const current = verdictAtHead(facts.runs, claim.pull);
    if (
      current?.verdict === 'accept' &&
      facts.config.autoland.enabled &&
      !after.liveSubjects.has(subjectKey(facts.repo.fullName, pullSubject(n))) &&
      !after.attempted(n, claim.pull.headSha, current.runId) &&
      !hasBlockingReview(facts, claim.reviews, claim.pull.author)
    ) {
      actions.push({ type: 'merge', pr: n, sha: claim.pull.headSha, method: facts.config.autoland.merge_method, run: current.runId });
    }
    if (shouldSpawnFix(facts, claim) === 'exhausted' && !claim.pull.labels.includes(STUCK_LABEL)) {
      actions.push({ type: 'fix_exhausted', pr: n, attempts: facts.config.fix_forward.max_attempts });
    }
  }
  return actions;
}

/** A reviewer's latest "changes requested" holds the merge, as it does on GitHub until dismissed. */
function hasBlockingReview(facts: RepoFacts, reviews: readonly ReviewView[], author: string): boolean {
  const latest = new Map<string, string>();
  for (const r of reviews) {
    if (r.author === author || facts.trustedLogins.has(r.author.toLowerCase()) || r.state === 'COMMENTED') continue;
    latest.set(r.author, r.state);
  }
  return [...latest.values()].includes('CHANGES_REQUESTED');
}

export interface ActionDeps {
  store: Store;
  forge: Forge;
  now: () => number;
  log: Log;
}

export async function executeRepoActions(deps: ActionDeps, facts: RepoFacts, actions: readonly RepoAction[]): Promise<void> {
  const { forge, store, log } = deps;
  for (const a of actions) {
    try {
      if (a.type === 'record_claim') {
        await store.claims.record({ repo: facts.repo.fullName, prNumber: a.pr, runId: a.run, issueNumber: a.issue, recordedAt: deps.now() });
      } else if (a.type === 'label_claim') {
        await forge.addLabels(facts.repo, a.pr, [CLAIM_LABEL]);
      } else if (a.type === 'merge') {
        const res = await forge.merge(facts.repo, a.pr, a.sha, a.method);
        if (res.ok) {
          await store.merges.record({ repo: facts.repo.fullName, prNumber: a.pr, headSha: a.sha, state: 'merged', detail: null, at: deps.now(), runId: a.run });
          log.info({ repo: facts.repo.fullName, pr: a.pr, sha: a.sha }, 'merged accepted claim PR');
          await recordDeliveryOwed({ ...deps, now: deps.now }, facts.repo, a.pr, res.sha, owedLabelOf(facts.config.delivery));
        } else {
          await store.merges.record({ repo: facts.repo.fullName, prNumber: a.pr, headSha: a.sha, state: 'refused', detail: res.message, at: deps.now(), runId: a.run });
          await forge.createComment(facts.repo, a.pr, mergeRefusedNotice(a.pr, a.sha, res.message));
        }
      } else if (a.type === 'fix_exhausted') {
        await forge.addLabels(facts.repo, a.pr, [STUCK_LABEL]);
        const author = facts.view.claims.find((c) => c.pull.number === a.pr)?.pull.author ?? null;
        await forge.createComment(facts.repo, a.pr, fixExhaustedNotice(author, a.pr, a.attempts));
      } else {
        log.warn({ repo: facts.repo.fullName, pr: a.pr, comment: a.commentId, author: a.author, reason: a.reason }, 'ignored verdict marker');
      }
    } catch (err) {
      log.warn({ repo: facts.repo.fullName, action: a.type, err: String(err) }, 'repo action failed; the next pass re-derives it');
    }
  }
}

/** Posts lander verdicts as marker comments; idempotent through runs.verdict_comment_id. */
export async function postVerdict(deps: ActionDeps, run: Run, repo: Parameters<Forge['createComment']>[0]): Promise<void> {
  if (!run.verdict || run.verdictCommentId !== null || run.prNumber === null || !run.headSha) return;
  const spend = spendLine(run.issueNumber ? `#${run.issueNumber}` : `#${run.prNumber}`, await deps.store.runs.spendOfWork(run.repo, run.issueNumber, run.prNumber));
  const id = await deps.forge.createComment(repo, run.prNumber, verdictComment({ run: run.id, sha: run.headSha, verdict: run.verdict }, run.summary, spend));
  await deps.store.runs.setVerdictComment(run.id, id);
}

/** Every reported verdict whose marker is not yet posted; a failure is retried next pass. Call under the pass lock. */
export async function postPendingVerdicts(deps: ActionDeps): Promise<void> {
  for (const run of (await deps.store.runs.listUnpostedVerdicts())) {
    const repo = await repoRefOf(deps.store, run.repo);
    if (!repo) continue;
    try {
      await postVerdict(deps, run, repo);
    } catch (err) {
      deps.log.warn({ run: run.id, err: String(err) }, 'could not post the verdict marker; retried next pass');
    }
  }
}
