import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { RepoRef } from '../../src/forge/types.js';
import { AUTOLAND, addClaimPull, makeHarness, type Harness } from '../helpers/fleet.js';

// LD02, LD03: random claim PRs, some pairs of which break the branch together (in meaning: each passes
// alone) and some of which do not merge together (in text), landers that judge exactly the tree they are
// given, fixes that repair a PR, and people who merge PRs or push to the default branch by hand in between.
// After every step, every commit yoke put on the default branch is a tree some lander accepted, exactly. Three
// ways to land: through the PR, by fast-forward, and through GitHub's merge queue (LD04: modelled as a ruleset
// requiring it and yoke/lander, so a group lands once yoke/lander says success on its very commit).

const REPO = 'acme/api';

type Step =
  | { t: 'pass' }
  | { t: 'finish'; pick: number; ok: boolean }
  | { t: 'human_merge'; pick: number }
  | { t: 'human_push' }
  /** Someone pushes to the default branch in the instant between the pass's read of it and yoke's read before a merge. */
  | { t: 'race_push' }
  /** Someone pushes in the instant between yoke's last read and the update itself (only a compare-and-swap holds). */
  | { t: 'window_push' }
  | { t: 'reap' }
  /** LD04: GitHub's merge queue acts: drops what failed or moved, builds the groups missing, lands what passed. */
  | { t: 'queue' };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 4, arbitrary: fc.constant({ t: 'pass' as const }) },
  {
    weight: 5,
    // Most runs end well; some fail (no verdict, no fix).
    arbitrary: fc.record({ t: fc.constant('finish' as const), pick: fc.nat(9), ok: fc.nat(3).map((n) => n > 0) }),
  },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('human_merge' as const), pick: fc.nat(9) }) },
  { weight: 1, arbitrary: fc.constant({ t: 'human_push' as const }) },
  { weight: 1, arbitrary: fc.constant({ t: 'race_push' as const }) },
  { weight: 1, arbitrary: fc.constant({ t: 'window_push' as const }) },
  { weight: 3, arbitrary: fc.constant({ t: 'reap' as const }) },
);
const queueStepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 6, arbitrary: stepArb },
  { weight: 3, arbitrary: fc.constant({ t: 'queue' as const }) },
);

/** How a case lands: through the PR, by fast-forward, or through GitHub's merge queue. */
type Way = 'pr' | 'fast_forward' | 'queue';

interface World {
  n: number;
  /** Pairs of PRs that break the branch together, though each passes alone. */
  meaning: [number, number][];
  /** Pairs of PRs whose changes do not merge together. */
  text: [number, number][];
}

const worldArb: fc.Arbitrary<World> = fc.integer({ min: 2, max: 5 }).chain((n) => {
  const pair = fc
    .tuple(fc.integer({ min: 1, max: n }), fc.integer({ min: 1, max: n }))
    .filter(([a, b]) => a !== b)
    .map(([a, b]): [number, number] => [Math.min(a, b), Math.max(a, b)]);
  return fc.record({
    n: fc.constant(n),
    meaning: fc.array(pair, { maxLength: 3 }),
    text: fc.array(pair, { maxLength: 2 }),
  });
});

/** A tree, as the set of changes it holds (`pr@version`, or a person's push), in one canonical string. */
const key = (tree: ReadonlySet<string>) => [...tree].sort().join(',');

class Model {
  /** What each commit of the default branch holds. */
  readonly trees = new Map<string, Set<string>>([['c0', new Set()]]);
  /** Every tree a lander accepted. */
  readonly accepted = new Set<string>();
  /** The commits yoke's merges made. */
  readonly byYoke: string[] = [];
  /** Each PR's version: a fix makes a new one, which conflicts with nothing. */
  readonly version = new Map<number, number>();
  human = false;
  pushes = 0;
  /** Reads of the branch left before an armed push lands (the push lands just before the next one after the pass's own). */
  racing = -1;
  /** A push is armed to land inside yoke's next update of the branch, after its last read. */
  window = false;

  constructor(readonly w: World) {}

  change(pr: number): string {
    return `${pr}@${this.version.get(pr) ?? 0}`;
  }

  private conflicts(pairs: [number, number][], a: string, b: string): boolean {
    const [pa, va] = a.split('@').map(Number) as [number, number];
    const [pb, vb] = b.split('@').map(Number) as [number, number];
    // A repaired version (a fix) conflicts with nothing.
    if (va > 0 || vb > 0 || Number.isNaN(pa) || Number.isNaN(pb)) return false;
    return pairs.some(([x, y]) => (x === pa && y === pb) || (x === pb && y === pa));
  }

  mergesOnto(tree: ReadonlySet<string>, change: string): boolean {
    return ![...tree].some((c) => this.conflicts(this.w.text, c, change));
  }

  green(tree: ReadonlySet<string>): boolean {
    const all = [...tree];
    return !all.some((a, i) => all.slice(i + 1).some((b) => this.conflicts(this.w.meaning, a, b)));
  }
}

/** The version of a PR a head is (headOf's inverse). */
const versionOf = (head: string) => parseInt(head.slice(-8), 16);

const headOf = (pr: number, version: number) =>
  `${pr.toString(16).padStart(2, '0')}${'0'.repeat(30)}${version.toString(16).padStart(8, '0')}`;

function setUp(w: World, way: Way): { h: Harness; m: Model; ref: RepoRef } {
  const fastForward = way === 'fast_forward';
  const h = makeHarness({ policy: { globalCap: 2, landerAttemptsPerHead: 3 } });
  const repo = h.forge.addRepo(REPO, { ...AUTOLAND, autoland: { enabled: true, fast_forward: fastForward } });
  repo.mergeQueue = way === 'queue';
  const m = new Model(w);
  const push = () => {
    const tip = repo.history.at(-1)!;
    m.trees.set(h.forge.commit(REPO, {}), new Set([...m.trees.get(tip)!, `push-${++m.pushes}`]));
  };
  // LD03: GitHub's merges API builds the commit a lander judges; a head that does not merge there is a 409.
  const build = h.forge.mergeIntoBranch.bind(h.forge);
  h.forge.mergeIntoBranch = async (ref, branch, head, message) => {
    const onto = repo.branches[branch]?.head;
    const tree = onto === undefined ? undefined : m.trees.get(onto);
    const change = `${parseInt(head.slice(0, 2), 16)}@${versionOf(head)}`;
    if (tree && !m.mergesOnto(tree, change)) return { ok: false, status: 409, message: 'Merge conflict' };
    const res = await build(ref, branch, head, message);
    if (res.ok && tree) m.trees.set(res.sha, new Set([...tree, change]));
    return res;
  };
  // The branch moves only as a fast-forward; what it moves to is what yoke put there.
  const move = h.forge.moveBranch.bind(h.forge);
  h.forge.moveBranch = async (ref, branch, sha) => {
    if (m.window) {
      m.window = false;
      push();
    }
    const res = await move(ref, branch, sha);
    if (res.ok && branch === 'main') m.byYoke.push(sha);
    return res;
  };
  // The forge merges a head onto the branch as it is; a change that does not merge there is refused, as GitHub does.
  const merge = h.forge.merge.bind(h.forge);
  h.forge.merge = async (ref, number, sha, method) => {
    if (m.window && !m.human) {
      m.window = false;
      // Through the PR API, the window between the read and GitHub's merge stays open (docs/landing.md): only
      // the fast-forward closes it, so this push is modelled there alone.
      if (fastForward) push();
    }
    const tip = repo.history.at(-1)!;
    const change = m.change(number);
    if (!m.mergesOnto(m.trees.get(tip)!, change)) return { ok: false, status: 405, message: 'Merge conflict' };
    const res = await merge(ref, number, sha, method);
    if (res.ok) {
      const at = repo.history.at(-1)!;
      m.trees.set(at, new Set([...m.trees.get(tip)!, change]));
      if (!m.human) m.byYoke.push(at);
    }
    return res;
  };
  // A push that lands between the pass's read of the branch and the read just before a merge.
  const read = h.forge.readBranchTip.bind(h.forge);
  h.forge.readBranchTip = async (ref, branch) => {
    if (m.racing === 0) push();
    if (m.racing >= 0) m.racing--;
    return read(ref, branch);
  };
  return { h, m, ref: repo.ref };
}

/**
 * LD04: GitHub's merge queue, as a ruleset requiring it and the yoke/lander check runs it. It drops a PR whose
 * head moved or whose group's check failed, builds the groups missing (a head that does not merge onto the
 * group below is dropped), and lands the bottom group once yoke/lander says success on its very commit.
 */
function queueActs(h: Harness, m: Model): void {
  const repo = h.forge.repo(REPO);
  const check = (sha: string) =>
    h.forge.checkRuns.filter((c) => c.headSha === sha && c.current.name === 'yoke/lander').at(-1)?.current;
  for (const e of [...(repo.queued ?? [])])
    if (repo.pulls.find((p) => p.number === e.pr)?.headSha !== e.headSha) h.forge.dequeue(REPO, e.pr);
  for (const g of [...(repo.groups ?? [])]) {
    const c = check(g.sha);
    if (c?.status === 'completed' && c.conclusion !== 'success') h.forge.dequeue(REPO, g.pr);
  }
  for (;;) {
    const built = h.forge.buildMergeGroups(REPO).filter((g) => !m.trees.has(g.sha));
    const bad = built.find((g) => {
      const below = m.trees.get(g.parent)!;
      const change = `${g.pr}@${versionOf(g.headSha)}`;
      if (!m.mergesOnto(below, change)) return true;
      m.trees.set(g.sha, new Set([...below, change]));
      return false;
    });
    if (!bad) break;
    h.forge.dequeue(REPO, bad.pr);
  }
  for (;;) {
    const bottom = repo.groups?.find((g) => g.parent === repo.history.at(-1));
    const c = bottom && check(bottom.sha);
    if (!bottom || c?.status !== 'completed' || c.conclusion !== 'success') return;
    m.byYoke.push(h.forge.landMergeGroup(REPO));
  }
}

async function step(h: Harness, m: Model, ref: RepoRef, s: Step): Promise<void> {
  const repo = h.forge.repo(REPO);
  switch (s.t) {
    case 'queue':
      queueActs(h, m);
      return;
    case 'pass':
      h.clock.advance(1_000);
      await h.engine.schedulerTick();
      return;
    case 'reap':
      await h.engine.reaperTick();
      return;
    case 'race_push':
      m.racing = 1;
      return;
    case 'window_push':
      m.window = true;
      return;
    case 'human_push': {
      const tip = repo.history.at(-1)!;
      const at = h.forge.commit(REPO, {});
      m.trees.set(at, new Set([...m.trees.get(tip)!, `push-${++m.pushes}`]));
      return;
    }
    case 'human_merge': {
      if (!repo.pulls.length) return;
      const pull = repo.pulls[s.pick % repo.pulls.length]!;
      m.human = true;
      try {
        await h.forge.merge(ref, pull.number, pull.headSha, 'squash');
      } finally {
        m.human = false;
      }
      return;
    }
    case 'finish': {
      const live = (await h.store.runs.listLive()).filter((r) => h.launcher.table.running.has(r.id));
      if (!live.length) return;
      const run = live[s.pick % live.length]!;
      if (run.kind === 'lander' && s.ok) {
        // The lander judges exactly the tree it was given: the heads of its stack, then its own, merged in
        // order onto the base it was dispatched with (LD05); a head that does not merge there fails it.
        const base = run.baseSha === null ? null : m.trees.get(run.baseSha);
        const head = repo.pulls.find((p) => p.number === run.prNumber)?.headSha;
        const stale = head !== run.headSha;
        let verdict: 'accept' | 'reject' = 'reject';
        if (run.landSha) {
          // LD03: it judges exactly the commit yoke built for it.
          const tree = m.trees.get(run.landSha);
          if (tree && !stale && m.green(tree)) {
            verdict = 'accept';
            m.accepted.add(key(tree));
          }
        } else if (base && !stale) {
          const tree = new Set(base);
          const merged = [...run.stack, { pr: run.prNumber!, head: run.headSha! }].every(({ pr, head: h }) => {
            const change = `${pr}@${versionOf(h)}`;
            if (!m.mergesOnto(tree, change)) return false;
            tree.add(change);
            return true;
          });
          if (merged && m.green(tree)) {
            verdict = 'accept';
            m.accepted.add(key(tree));
          }
        }
        await h.store.runs.recordReport(run.id, { outcome: 'success', verdict, summary: null }, 0);
      } else if (run.kind === 'fix' && s.ok) {
        const pull = repo.pulls.find((p) => p.number === run.prNumber);
        if (pull) {
          const v = (m.version.get(pull.number) ?? 0) + 1;
          m.version.set(pull.number, v);
          pull.headSha = headOf(pull.number, v);
        }
        await h.store.runs.recordReport(run.id, { outcome: 'success', verdict: null, summary: 'fixed' }, 0);
      } else if (!s.ok) {
        await h.store.runs.recordReport(run.id, { outcome: 'failure', verdict: null, summary: null }, 0);
      }
      h.launcher.finish(run.id);
      return;
    }
  }
}

describe.each([
  ['through the PR', 'pr' as const],
  ['by fast-forward', 'fast_forward' as const],
  ["through GitHub's merge queue", 'queue' as const],
])('landing a fleet of claim PRs under random interleavings, %s', (_how, way) => {
  it('LD02 LD03 LD04 LD05 every commit yoke puts (or has GitHub put) on the default branch is a tree a lander accepted, exactly, whatever the conflicts and whatever people merge or push in between', async () => {
    let merged = 0;
    let stacked = 0;
    const steps = way === 'queue' ? queueStepArb : stepArb;
    await fc.assert(
      // The queue's way takes more steps to land a PR (validated alone, queued, grouped, validated again).
      fc.asyncProperty(
        worldArb,
        fc.array(steps, { minLength: 20, maxLength: way === 'queue' ? 120 : 80 }),
        async (w, steps) => {
          const { h, m, ref } = setUp(w, way);
          try {
            for (let pr = 1; pr <= w.n; pr++)
              await addClaimPull(h, REPO, { number: pr, issue: pr, headSha: headOf(pr, 0), labels: ['yoke:claim'] });
            for (const s of steps) {
              await step(h, m, ref, s);
              // GitHub's queue acts soon after each pass and reap, as well as at random steps between them.
              if (way === 'queue' && (s.t === 'pass' || s.t === 'reap')) queueActs(h, m);
              for (const at of m.byYoke) expect(m.accepted, `commit ${at}`).toContain(key(m.trees.get(at)!));
            }
            merged += m.byYoke.length;
            const runs = await h.store.runs.listForRepo(REPO);
            stacked +=
              way === 'queue'
                ? // LD04: a merge group's lander accepted its PR on the groups of others below it (GitHub's batching).
                  runs.filter((r) => r.landSha && r.stack.length && r.verdict === 'accept').length
                : (await h.store.merges.listForRepo(REPO)).filter(
                    (x) => x.state === 'merged' && runs.find((r) => r.id === x.runId)?.stack.length,
                  ).length;
          } finally {
            // Each case's store is its own database on PostgreSQL: its connections go with it.
            await h.store.close();
          }
        },
      ),
      // A pinned seed, so the coverage below is the same on every run (a random one left the queue's batching
      // unexercised about one run in eight); YOKE_PROPERTY_SEED explores others.
      { numRuns: 250, seed: Number(process.env.YOKE_PROPERTY_SEED ?? 20261205) },
    );
    // The property says something only if yoke merged: it did, many times over (about 100 times through the
    // PR, 50 by fast-forward, where more verdicts are voided by pushes in the window, 30 through the queue,
    // where each PR is validated twice and every push rebuilds the groups).
    expect(merged).toBeGreaterThan(15);
    // LD05: and some of those merges landed a PR accepted on a stack of others, not alone (LD04: some merge
    // groups were accepted on the groups of other PRs, as the queue batches them).
    expect(stacked).toBeGreaterThan(1);
  }, 300_000);
});
