import { owedLabelOf } from '../../config/delivery.js';
import type { MergeListener } from '../../fleet/landing/merges.js';
import type { RepoRef } from '../../forge/types.js';
import { errorStack } from '../../kernel/error-text.js';
import type { Io } from '../../fleet/context.js';

// An item's delivery is owed from the merge of its claim PR until its
// close-out. yoke's own merges record it at once; a claim PR merged by hand is
// found when a deployment run is created (the store's claims are read against
// GitHub's record of the PR).

/** Delivery's subscription to the fleet's merges: each claim PR yoke merges owes its item's delivery. */
export const recordOwedOnMerge: MergeListener = (deps, merged) =>
  recordDeliveryOwed(deps, merged, owedLabelOf(merged.config.delivery));

/** Records the owed delivery of a merged claim PR and labels its issue; a failed label is retried later. */
export async function recordDeliveryOwed(
  deps: Io,
  { repo, pr, mergeSha }: { repo: RepoRef; pr: number; mergeSha: string },
  label: string,
): Promise<void> {
  const claim = await deps.store.claims.forPull(repo.fullName, pr);
  if (!claim) return;
  await deps.store.deliveryItems.recordOwed({
    repo: repo.fullName,
    issueNumber: claim.issueNumber,
    prNumber: pr,
    mergeSha,
    at: deps.clock.now(),
  });
  await labelOwed(deps, repo, claim.issueNumber, label);
}

async function labelOwed(deps: Io, repo: RepoRef, issue: number, label: string): Promise<void> {
  try {
    await deps.forge.addLabels(repo, issue, [label]);
    await deps.store.deliveryItems.markLabelled(repo.fullName, issue);
  } catch (err) {
    deps.log.warn(
      { repo: repo.fullName, issue, err: errorStack(err) },
      'could not label the owed delivery; tried again later',
    );
  }
}

/** Finds claim PRs merged without yoke (by hand), and labels owed items whose label failed. */
export async function reconcileOwed(deps: Io, repo: RepoRef, label: string): Promise<void> {
  for (const claim of await deps.store.claims.listForRepo(repo.fullName)) {
    if (await deps.store.deliveryItems.get(repo.fullName, claim.issueNumber)) continue;
    const pull = await deps.forge.getPull(repo, claim.prNumber);
    if (pull?.merged && pull.mergeCommitSha) {
      await deps.store.deliveryItems.recordOwed({
        repo: repo.fullName,
        issueNumber: claim.issueNumber,
        prNumber: claim.prNumber,
        mergeSha: pull.mergeCommitSha,
        at: deps.clock.now(),
      });
    }
  }
  for (const item of (await deps.store.deliveryItems.listUnlabelled()).filter((i) => i.repo === repo.fullName))
    await labelOwed(deps, repo, item.issueNumber, label);
}
