import type { Forge, RepoRef } from '../../forge/types.js';
import { LeadershipLost } from '../../kernel/fence.js';
import type { Log } from '../../kernel/log.js';
import type { Candidate } from '../candidate.js';
import { landersOn, type LandingRecord } from '../stacks.js';
import { errorStack } from '../../kernel/error-text.js';

// LD03 with autoland.fast_forward: before a lander starts, yoke builds on GitHub the very commit it is to judge
// (bors's way): its base with the stack's heads and its own merged on, in order, by GitHub's merges API, on a
// branch of yoke's own. The lander checks out exactly that commit; an accept moves the base branch to it as a
// fast-forward, which GitHub refuses if the branch moved in between. What lands is what was judged, to the commit.

/** The branch a lander's commit is built on, one per claim PR (a PR has at most one lander live). */
export const landBranch = (pr: number): string => `yoke/land/${pr}`;

type LandCommit =
  | { kind: 'built'; sha: string }
  /** A head does not merge there: the lander merges it itself and rejects it naming the files (LD01). */
  | { kind: 'conflict'; pr: number; message: string }
  /** What GitHub holds is not yoke's pinned tree: someone moved the branch in the window (LD03). */
  | { kind: 'forged'; problem: string };

/** A commit's parents as GitHub's git database has them, first parent first. */
export type ParentsOf = ReadonlyMap<string, readonly string[] | null>;

const short = (sha: string): string => sha.slice(0, 7);

/**
 * LD03: why `land` is not yoke's pinned tree, or null when it is: walking its first parents, each commit is a
 * merge of exactly two parents whose second is the next head (the PR's own, then the stack's from the top), and
 * the walk ends on the pinned base. A commit a writer pushed onto the land branch in the window, or a branch
 * moved elsewhere, fails it. Pure: `parents` holds what the walk read.
 */
export function landChainProblem(
  parents: ParentsOf,
  land: string,
  chain: { base: string; heads: readonly string[] },
): string | null {
  let at = land;
  for (const head of [...chain.heads].reverse()) {
    const ps = parents.get(at);
    if (!ps) return `GitHub has no commit ${short(at)}`;
    if (ps.length !== 2 || ps[1] !== head)
      return `${short(at)} is not yoke's merge of ${short(head)} onto the commit below it (its parents: ${ps.map(short).join(', ') || 'none'})`;
    at = ps[0]!;
  }
  return at === chain.base ? null : `its first parents reach ${short(at)}, not the pinned base ${short(chain.base)}`;
}

/** Reads the first-parent walk `landChainProblem` checks: one commit per head, from `land` down. */
export async function readLandChain(
  forge: Pick<Forge, 'commitParents'>,
  repo: RepoRef,
  land: string,
  heads: number,
): Promise<ParentsOf> {
  const out = new Map<string, readonly string[] | null>();
  let at: string | undefined = land;
  for (let i = 0; i < heads && at; i++) {
    const ps = await forge.commitParents(repo, at);
    out.set(at, ps);
    at = ps?.[0];
  }
  return out;
}

/** LD03: `land` checked against yoke's pinned tree on GitHub: null when it is that tree, else what is wrong. */
export async function checkLandCommit(
  forge: Pick<Forge, 'commitParents'>,
  repo: RepoRef,
  land: string,
  chain: { base: string; heads: readonly string[] },
): Promise<string | null> {
  return landChainProblem(await readLandChain(forge, repo, land, chain.heads.length), land, chain);
}

type Builder = Pick<Forge, 'pinBranch' | 'mergeIntoBranch' | 'commitParents'>;

/**
 * Builds the commit a stacked lander judges. A stack on top of one whose commit yoke built for the lander below
 * (the same tree) grows from that commit, so the landers of one stack judge a chain of commits, each a
 * fast-forward of the one below it. What GitHub built is read back and checked before it is used: a branch moved
 * by anyone else in the window is rebuilt once from the pin, never adopted.
 */
async function buildLandCommit(
  forge: Builder,
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
  const chain = { base: c.baseSha!, heads: [...stack.map((m) => m.head), c.headSha!] };
  let forged = '';
  for (let attempt = 0; attempt < 2; attempt++) {
    const made = await mergeOnto(forge, repo, { branch: landBranch(c.prNumber!), start, todo });
    if (made.kind !== 'built') return made;
    const problem = await checkLandCommit(forge, repo, made.sha, chain);
    if (!problem) return made;
    forged = problem;
  }
  return { kind: 'forged', problem: forged };
}

/** Pins `branch` at `start` and merges each head onto it in order, by GitHub's merges API. */
async function mergeOnto(
  forge: Builder,
  repo: RepoRef,
  { branch, start, todo }: { branch: string; start: string; todo: readonly { pr: number; head: string }[] },
): Promise<LandCommit> {
  await forge.pinBranch(repo, branch, start);
  let sha = start;
  for (const m of todo) {
    const res = await forge.mergeIntoBranch(repo, branch, m.head, `Merge #${m.pr} at ${short(m.head)} (yoke lander)`);
    if (!res.ok) return { kind: 'conflict', pr: m.pr, message: res.message };
    sha = res.sha;
  }
  return { kind: 'built', sha };
}

/** The lander's commit, or null for one that merges the heads itself (no fast-forward, or a conflict). */
export async function prepareLandCommit(
  deps: { forge: Builder; log: Log },
  repo: RepoRef,
  c: Candidate,
  record: LandingRecord,
): Promise<string | null> {
  try {
    const built = await buildLandCommit(deps.forge, repo, c, record);
    if (built.kind === 'built') return built.sha;
    if (built.kind === 'forged') {
      deps.log.warn(
        { repo: repo.fullName, pr: c.prNumber, branch: landBranch(c.prNumber!), problem: built.problem },
        'the land branch was moved by someone else while yoke built it, twice; the lander merges the heads itself',
      );
      return null;
    }
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
