import type { Forge, RepoRef } from '../forge/types.js';
import { LeadershipLost } from '../kernel/fence.js';
import type { Log } from '../kernel/log.js';
import type { Candidate } from './candidate.js';
import { landersOn, type LandingRecord } from './stacks.js';
import { errorStack } from '../kernel/error-text.js';

// LD03 with autoland.fast_forward: before a lander starts, yoke builds on GitHub the very commit it is to judge
// (bors's way): its base with the stack's heads and its own merged on, in order, by GitHub's merges API, on a
// branch of yoke's own. The lander checks out exactly that commit; an accept moves the base branch to it as a
// fast-forward, which GitHub refuses if the branch moved in between. What lands is what was judged, to the commit.

/** The branch a lander's commit is built on, one per claim PR (a PR has at most one lander live). */
export const landBranch = (pr: number): string => `yoke/land/${pr}`;

type LandCommit =
  | { kind: 'built'; sha: string }
  /** A head does not merge there: the lander merges it itself and rejects it naming the files (LD01). */
  | { kind: 'conflict'; pr: number; message: string };

/**
 * Builds the commit a stacked lander judges. A stack on top of one whose commit yoke built for the lander below
 * (the same tree) grows from that commit, so the landers of one stack judge a chain of commits, each a
 * fast-forward of the one below it.
 */
async function buildLandCommit(
  forge: Pick<Forge, 'pinBranch' | 'mergeIntoBranch'>,
  repo: RepoRef,
  c: Pick<Candidate, 'prNumber' | 'headSha' | 'baseSha' | 'stack'>,
  record: LandingRecord,
): Promise<LandCommit> {
  const stack = c.stack ?? [];
  let start = c.baseSha!;
  let todo = [...stack, { pr: c.prNumber!, head: c.headSha! }];
  const below = stack.at(-1);
  if (below) {
    const built = landersOn(
      record,
      { number: below.pr, headSha: below.head },
      { root: c.baseSha!, stack: stack.slice(0, -1) },
    )
      .filter((r) => r.landSha && (r.status === 'live' || r.verdict === 'accept'))
      .at(-1);
    if (built) {
      start = built.landSha!;
      todo = todo.slice(-1);
    }
  }
  const branch = landBranch(c.prNumber!);
  await forge.pinBranch(repo, branch, start);
  let sha = start;
  for (const m of todo) {
    const res = await forge.mergeIntoBranch(
      repo,
      branch,
      m.head,
      `Merge #${m.pr} at ${m.head.slice(0, 7)} (yoke lander)`,
    );
    if (!res.ok) return { kind: 'conflict', pr: m.pr, message: res.message };
    sha = res.sha;
  }
  return { kind: 'built', sha };
}

/** The lander's commit, or null for one that merges the heads itself (no fast-forward, or a conflict). */
export async function prepareLandCommit(
  deps: { forge: Pick<Forge, 'pinBranch' | 'mergeIntoBranch'>; log: Log },
  repo: RepoRef,
  c: Candidate,
  record: LandingRecord,
): Promise<string | null> {
  try {
    const built = await buildLandCommit(deps.forge, repo, c, record);
    if (built.kind === 'built') return built.sha;
    deps.log.info(
      { repo: repo.fullName, pr: c.prNumber, conflicting: built.pr, detail: built.message },
      'a head does not merge onto the tree to judge; the lander merges it itself and says where',
    );
  } catch (err) {
    if (err instanceof LeadershipLost) throw err;
    // GitHub would not build it (a refused write, an outage): the lander merges the heads itself, and the merge
    // goes through the PR API, read at its instant.
    deps.log.warn({ repo: repo.fullName, pr: c.prNumber, err: errorStack(err) }, 'could not build the commit to judge');
  }
  return null;
}
