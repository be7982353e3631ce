import type { RepoRef } from '../forge/types.js';

// SC03: when an installation's budget may not cover every read, the order its repositories are read in: lander and
// merge work first (an open claim PR, a live run), then the repositories yoke never read (it knows nothing of them
// yet), then the ones whose last view came due for its probe. Each group keeps the listing's order; a repository
// whose last view stands costs nothing, wherever it falls. Without the middle group, a fleet larger than a minute's
// budget could take many passes over its first read: each pass spent the minute on probing the listing's head, read
// the minutes before, and the never-read tail was deferred again.

/** The repositories in the order they are read (each asked about once, not at every comparison). */
export function inReadOrder(
  repos: readonly RepoRef[],
  busy: (repo: RepoRef) => boolean,
  everRead: (repo: RepoRef) => boolean,
): RepoRef[] {
  const rank = new Map(repos.map((r) => [r, busy(r) ? 0 : everRead(r) ? 2 : 1]));
  return [...repos].sort((a, b) => rank.get(a)! - rank.get(b)!);
}
