import { makeRefusal } from '../../kernel/codes/table.js';
import { effectiveCap, type CapPolicy, type LivenessSnapshot } from '../cap.js';
import { stageRank, subjectKey, type Candidate, type Waiting } from '../candidate.js';

export type LaunchAttempt =
  | { kind: 'launched'; runId: string }
  | { kind: 'over_cap'; freshCount: number }
  | { kind: 'subject_busy' }
  /** SP15: the repository paused (earlier in this pass, say); its AFK work waits for a reset. */
  | { kind: 'paused' }
  /** BU01: the budgets cannot cover its reservation (shed by the pass's ledger, or refused by the locked launch). */
  | { kind: 'over_budget'; why: Waiting['reason'] }
  | { kind: 'launch_failed'; runId: string; detail: string };

export interface PassOutcome {
  candidate: Candidate;
  result: LaunchAttempt | { kind: 'shed'; liveCount: number; cap: number } | { kind: 'in_flight' };
  /** Why it was not launched (absent when it was, or when its launch failed: that is a failure, not a wait). */
  why?: Waiting['reason'];
}

/**
 * Stable sort by stage rank; stage is the only key (SP04). Within a stage,
 * repositories take turns (SC04): one candidate from each, round-robin,
 * starting from a repository that rotates with every pass, so a long backlog
 * in one repository cannot take every slot of a shared cap pass after pass.
 * Each repository's own candidates keep their order.
 */
export function orderCandidates(candidates: readonly Candidate[], rotation = 0): Candidate[] {
  const byStage = [...candidates].sort((a, b) => stageRank(a.stage) - stageRank(b.stage));
  const out: Candidate[] = [];
  for (let i = 0; i < byStage.length;) {
    let j = i;
    while (j < byStage.length && byStage[j]!.stage === byStage[i]!.stage) j++;
    out.push(...interleave(byStage.slice(i, j), rotation));
    i = j;
  }
  return out;
}

function interleave(stage: readonly Candidate[], rotation: number): Candidate[] {
  const queues = new Map<string, Candidate[]>();
  for (const c of stage) {
    const q = queues.get(c.repo);
    if (q) q.push(c);
    else queues.set(c.repo, [c]);
  }
  const lanes = [...queues.values()];
  if (lanes.length < 2) return [...stage];
  const start = ((rotation % lanes.length) + lanes.length) % lanes.length;
  const order = [...lanes.slice(start), ...lanes.slice(0, start)];
  const out: Candidate[] = [];
  for (let round = 0; out.length < stage.length; round++)
    for (const lane of order) if (round < lane.length) out.push(lane[round]!);
  return out;
}

const inFlightOf = (c: Candidate): Waiting['reason'] => makeRefusal('in_flight', { repo: c.repo, subject: c.subject });

export interface PassResult {
  outcomes: PassOutcome[];
  /** Liveness after this pass's launches: what post-launch decisions (merges) must respect. */
  after: LivenessSnapshot;
}

/**
 * Spends the cap down the ordered list. The snapshot check only sheds load;
 * `launch` is the locked launch that re-counts and may refuse with over_cap.
 * The only reader of the cap in the launch decision. The given snapshot is
 * not changed; the liveness the pass ends with is returned.
 */
export async function spawnPass(
  candidates: readonly Candidate[],
  before: LivenessSnapshot,
  policy: CapPolicy & { pauseThreshold: number },
  launch: (candidate: Candidate, cap: number) => Promise<LaunchAttempt>,
  /** Which repository goes first within each stage (the engine advances it every pass). */
  rotation = 0,
): Promise<PassResult> {
  const snapshot: LivenessSnapshot = { liveCount: before.liveCount, liveSubjects: new Set(before.liveSubjects) };
  const outcomes: PassOutcome[] = [];
  // One at_cap reason per repository and count: a long backlog shed at the cap shares it.
  const atCapReasons = new Map<string, { live: number; cap: number; reason: Waiting['reason'] }>();
  const atCap = (repo: string, live: number, cap: number): Waiting['reason'] => {
    const known = atCapReasons.get(repo);
    if (known && known.live === live && known.cap === cap) return known.reason;
    const reason = makeRefusal('at_cap', { repo, live, cap });
    atCapReasons.set(repo, { live, cap, reason });
    return reason;
  };
  for (const candidate of orderCandidates(candidates, rotation)) {
    const cap = effectiveCap(policy, candidate.repo);
    const key = subjectKey(candidate.repo, candidate.subject);
    if (snapshot.liveSubjects.has(key)) {
      outcomes.push({ candidate, result: { kind: 'in_flight' }, why: inFlightOf(candidate) });
      continue;
    }
    if (snapshot.liveCount >= cap) {
      outcomes.push({
        candidate,
        result: { kind: 'shed', liveCount: snapshot.liveCount, cap },
        why: atCap(candidate.repo, snapshot.liveCount, cap),
      });
      continue;
    }
    const result = await launch(candidate, cap);
    const why =
      result.kind === 'over_cap'
        ? atCap(candidate.repo, result.freshCount, cap)
        : result.kind === 'subject_busy'
          ? inFlightOf(candidate)
          : result.kind === 'paused'
            ? makeRefusal('repo_paused', { repo: candidate.repo, threshold: policy.pauseThreshold })
            : result.kind === 'over_budget'
              ? result.why
              : undefined;
    if (result.kind === 'launched') {
      snapshot.liveCount++;
      snapshot.liveSubjects.add(key);
    } else if (result.kind === 'over_cap') {
      // The locked launch proved the fresh count is at least this repo's cap.
      snapshot.liveCount = Math.max(snapshot.liveCount, cap);
    } else if (result.kind === 'subject_busy') {
      snapshot.liveSubjects.add(key);
    }
    outcomes.push(why ? { candidate, result, why } : { candidate, result });
  }
  return { outcomes, after: snapshot };
}
