import type { Wake } from '../../store/delivery/qa.js';
import type { GateInput, StageEvaluation } from './evaluate.js';
import type { Wait } from './waits.js';

// The gate step's decision, pure: from what the check gathered and the
// stage's evaluation, the one set of writes the check makes (in one
// transaction) and whether the stage settles. Nothing here reads or writes;
// check.ts gathers before it and writes after it.

export interface GateStepInput {
  runId: string;
  stage: string;
  gate: GateInput;
  evaluation: StageEvaluation;
  /** DX05: a live deployment-stage execution still delivers to this stage. */
  deliveringExecution: boolean;
  now: number;
}

export interface GateStep {
  /** When the step's writes happen, as the check's clock read it. */
  at: number;
  /** DX05: the stage settles once every member is settled and no deployment-stage execution is still delivering to it. */
  settles: boolean;
  failureReviews: { runId: string; stage: string; verdictId: number; subject: string; caseId: string; at: number }[];
  /** QA01/QA02/QA10: wakes of a member's holder, one per wait; those already recorded are left out when written. */
  wakes: { wake: Wake; wait: Wait }[];
  settledMembers: number[];
  /** QA22: groups that passed close now. */
  passedGroups: string[];
  waits: Wait[];
}

export function decideGateStep(input: GateStepInput): GateStep {
  const { runId, stage, gate, evaluation, now } = input;
  const holders = new Map(gate.members.map((m) => [m.item, m.holder]));
  return {
    at: now,
    settles: evaluation.settled && !input.deliveringExecution,
    failureReviews: evaluation.failureReviews.map((f) => ({ ...f, runId, stage, at: now })),
    // Only item QA and refusals wake a member's holder.
    wakes: evaluation.waits
      .filter((w) => w.recipient === 'holder')
      .map((w) => ({
        wait: w,
        wake: {
          runId,
          stage,
          recipient: holders.get(w.subject) ?? 'unknown',
          subject: w.subject,
          waitKey: w.key,
          reason: w.code,
          wokenAt: now,
        },
      })),
    settledMembers: evaluation.members.filter((m) => m.state === 'settled').map((m) => m.issueNumber),
    passedGroups: evaluation.groups.filter((g) => g.state === 'passed').map((g) => g.id),
    waits: evaluation.waits,
  };
}
