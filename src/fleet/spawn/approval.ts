import type { IssueView } from '../../forge/types.js';
import type { RepoFacts } from '../repo-facts.js';

// TR24: what a person approved of an issue (by labelling it, or confirming it with `/yoke start`): its
// title and body, as one digest. A run starts only on an issue that reads as approved.

/**
 * TR24: whether the issue reads as it did when it was approved (labelled, or confirmed with `/yoke start`):
 * its title and body, or, for a record made before titles counted, its body.
 */
export const readsAsApproved = (
  seen: { bodyDigest: string },
  issue: Pick<IssueView, 'bodyDigest' | 'digest'>,
): boolean => seen.bodyDigest === issue.digest || seen.bodyDigest === issue.bodyDigest;

/** TR24: whether the issue's title or body differs from what it was when yoke first saw its label. */
export function issueEditedSinceLabel(
  facts: Pick<RepoFacts, 'afkLabels'>,
  issue: Pick<IssueView, 'number' | 'bodyDigest' | 'digest'>,
): boolean {
  const seen = facts.afkLabels?.get(issue.number);
  return seen !== undefined && !readsAsApproved(seen, issue);
}

/** TR24: an issue's digest as this pass read it (the view, or a start request's own read of it), or null. */
export function digestNow(facts: Pick<RepoFacts, 'view' | 'startableIssues'>, issue: number): string | null {
  return facts.view.issues.find((i) => i.number === issue)?.digest ?? facts.startableIssues.get(issue) ?? null;
}

/**
 * TR24: whether a writer's start may launch on the issue as it reads now: a writer approved exactly this text
 * (the `/yoke start` records it). An edit since, or no approval on record, holds it.
 */
export function startApproved(
  facts: Pick<RepoFacts, 'view' | 'startableIssues' | 'afkLabels'>,
  issue: number,
): boolean {
  const seen = facts.afkLabels?.get(issue);
  const now = digestNow(facts, issue);
  const viewed = facts.view.issues.find((i) => i.number === issue);
  if (!seen || now === null) return false;
  return viewed ? readsAsApproved(seen, viewed) : seen.bodyDigest === now;
}
