import type { IssueView } from '../forge/types.js';
import type { RepoFacts } from './repo-facts.js';

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
