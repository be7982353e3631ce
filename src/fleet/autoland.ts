import { makeRefusal } from '../codes.js';
import { encodeMarker } from '../forge/marker.js';
import type { Forge, ReviewView } from '../forge/types.js';
import type { Store } from '../store/store.js';
import type { Run } from '../store/runs.js';
import { pullSubject, subjectKey } from './candidate.js';
import { shouldSpawnFix } from './producers.js';
import { CLAIM_LABEL, STUCK_LABEL, isClaim, verdictOf, type RepoFacts } from './repo-facts.js';

// What a pass does besides launching, decided purely from RepoFacts:
// label claim PRs named by a run trailer, merge accepted heads, and tell
// maintainers when fix-forward has run out. Executed after the decisions.

export type RepoAction =
  | { type: 'label_claim'; pr: number; run: string }
  | { type: 'merge'; pr: number; sha: string; method: 'merge' | 'squash' | 'rebase'; run: string }
  | { type: 'fix_exhausted'; pr: number; attempts: number }
  | { type: 'ignored_marker'; pr: number; commentId: number; author: string; reason: string };

export function planRepoActions(facts: RepoFacts, merged: (pr: number, sha: string) => boolean): RepoAction[] {
  const actions: RepoAction[] = [];
  const ownRuns = new Set(facts.runs.map((r) => r.id));
  for (const pull of facts.snapshot.pulls) {
    if (pull.yokeRun && ownRuns.has(pull.yokeRun) && !pull.labels.includes(CLAIM_LABEL)) {
      actions.push({ type: 'label_claim', pr: pull.number, run: pull.yokeRun });
    }
  }
  for (const claim of facts.snapshot.claims) {
    const reading = verdictOf(facts, claim);
    for (const ig of reading.ignored) actions.push({ type: 'ignored_marker', pr: claim.pull.number, ...ig });
    if (!isClaim(claim)) continue;
    const n = claim.pull.number;
    const current = reading.current;
    if (
      current?.verdict === 'accept' &&
      facts.config.autoland.enabled &&
      !facts.liveSubjects.has(subjectKey(facts.repo.fullName, pullSubject(n))) &&
      !merged(n, claim.pull.headSha) &&
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
  log: { info(o: object, m?: string): void; warn(o: object, m?: string): void };
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
          const r = makeRefusal('merge_refused', { number: a.pr, sha: a.sha.slice(0, 7), detail: res.message });
          await forge.createComment(facts.repo, a.pr, `yoke did not merge this PR. ${r.message}\n\n**To recover:** ${r.recovery}`);
        }
      } else if (a.type === 'fix_exhausted') {
        const r = makeRefusal('fix_attempts_exhausted', { number: a.pr, attempts: a.attempts });
        await forge.addLabels(facts.repo, a.pr, [STUCK_LABEL]);
        await forge.createComment(facts.repo, a.pr, `@${facts.snapshot.claims.find((c) => c.pull.number === a.pr)?.pull.author ?? 'maintainers'} ${r.message} yoke has stopped fixing it and labelled it \`${STUCK_LABEL}\`.\n\n**To recover:** ${r.recovery}`);
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
  const body = encodeMarker({ run: run.id, sha: run.headSha, verdict: run.verdict }, run.summary ?? '');
  const id = await deps.forge.createComment(repo, run.prNumber, body);
  deps.store.runs.setVerdictComment(run.id, id);
}
