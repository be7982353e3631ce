import type { Forge, ReviewView } from '../forge/types.js';
import type { Log } from '../log.js';
import { fixExhaustedNotice, mergeRefusedNotice, verdictComment } from '../messages.js';
import type { Store } from '../store/store.js';
import type { Run } from '../store/runs.js';
import { pullSubject, subjectKey } from './candidate.js';
import { shouldSpawnFix } from './producers.js';
import { CLAIM_LABEL, STUCK_LABEL, isClaim, verdictOf, type RepoFacts } from './repo-facts.js';
import { repoRefOf } from './repo-state.js';

// What a pass does besides launching, decided purely from RepoFacts:
// label claim PRs named by a run trailer, merge accepted heads, and tell
// maintainers when fix-forward has run out. Executed after the decisions.

export type RepoAction =
  | { type: 'label_claim'; pr: number; run: string }
  | { type: 'merge'; pr: number; sha: string; method: 'merge' | 'squash' | 'rebase'; run: string }
  | { type: 'fix_exhausted'; pr: number; attempts: number }
  | { type: 'ignored_marker'; pr: number; commentId: number; author: string; reason: string };

export interface AfterLaunch {
  /** Live subjects once this pass's launches are counted (a lander just launched holds its PR's merge). */
  liveSubjects: ReadonlySet<string>;
  /** Whether a merge of this PR at this head was already attempted. */
  merged(pr: number, sha: string): boolean;
}

export function planRepoActions(facts: RepoFacts, after: AfterLaunch): RepoAction[] {
  const actions: RepoAction[] = [];
  const ownRuns = new Set(facts.runs.map((r) => r.id));
  for (const pull of facts.view.pulls) {
    if (pull.yokeRun && ownRuns.has(pull.yokeRun) && !pull.labels.includes(CLAIM_LABEL)) {
      actions.push({ type: 'label_claim', pr: pull.number, run: pull.yokeRun });
    }
  }
  for (const claim of facts.view.claims) {
    const reading = verdictOf(facts, claim);
    for (const ig of reading.ignored) actions.push({ type: 'ignored_marker', pr: claim.pull.number, ...ig });
    if (!isClaim(claim)) continue;
    const n = claim.pull.number;
    const current = reading.current;
    if (
      current?.verdict === 'accept' &&
      facts.config.autoland.enabled &&
      !after.liveSubjects.has(subjectKey(facts.repo.fullName, pullSubject(n))) &&
      !after.merged(n, claim.pull.headSha) &&
      !hasBlockingReview(facts, claim.reviews, claim.pull.author)
    ) {
      actions.push({ type: 'merge', pr: n, sha: claim.pull.headSha, method: facts.config.autoland.merge_method, run: current.run });
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
      if (a.type === 'label_claim') {
        await forge.addLabels(facts.repo, a.pr, [CLAIM_LABEL]);
      } else if (a.type === 'merge') {
        const res = await forge.merge(facts.repo, a.pr, a.sha, a.method);
        if (res.ok) {
          store.merges.record({ repo: facts.repo.fullName, prNumber: a.pr, headSha: a.sha, state: 'merged', detail: null, at: deps.now() });
          log.info({ repo: facts.repo.fullName, pr: a.pr, sha: a.sha }, 'merged accepted claim PR');
        } else {
          store.merges.record({ repo: facts.repo.fullName, prNumber: a.pr, headSha: a.sha, state: 'refused', detail: res.message, at: deps.now() });
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
  const id = await deps.forge.createComment(repo, run.prNumber, verdictComment({ run: run.id, sha: run.headSha, verdict: run.verdict }, run.summary));
  deps.store.runs.setVerdictComment(run.id, id);
}

/** Every reported verdict whose marker is not yet posted; a failure is retried next pass. Call under the pass lock. */
export async function postPendingVerdicts(deps: ActionDeps): Promise<void> {
  for (const run of deps.store.runs.listUnpostedVerdicts()) {
    const repo = repoRefOf(deps.store, run.repo);
    if (!repo) continue;
    try {
      await postVerdict(deps, run, repo);
    } catch (err) {
      deps.log.warn({ run: run.id, err: String(err) }, 'could not post the verdict marker; retried next pass');
    }
  }
}
