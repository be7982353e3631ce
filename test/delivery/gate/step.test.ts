import { describe, expect, it } from 'vitest';
import type { GateInput, GateMember, StageEvaluation } from '../../../src/delivery/gate/evaluate.js';
import type { Wait } from '../../../src/delivery/gate/waits.js';
import { decideGateStep } from '../../../src/delivery/gate/step.js';

// The gate step's decision is pure: what the check gathered and the stage's
// evaluation in, the writes it makes out. No store, no forge.

const member = (n: number, holder: string | null): GateMember => ({
  issueNumber: n,
  item: `APP-${n}`,
  prNumber: 10 + n,
  prAuthor: 'agent',
  holder,
  removed: false,
  refusal: null,
  plans: [],
  approvals: [],
});
const gate = (members: GateMember[]): GateInput => ({
  repo: 'acme/api',
  run: { id: 'dr-1', commit: 'c9', stage: 'qa' },
  members,
  snapshots: new Map(),
  groups: [],
  verdicts: [],
  reviewedFailures: new Set(),
  stageRefusal: null,
  allowEmpty: false,
});
const wait = (subject: string, recipient: Wait['recipient'], key: string): Wait => ({
  key,
  code: 'qa_case_missing' as Wait['code'],
  recipient,
  subject,
  detail: `${subject} waits`,
  command: 'yoke qa case run',
});
const evaluation = (e: Partial<StageEvaluation>): StageEvaluation => ({
  members: [],
  groups: [],
  capture: [],
  failureReviews: [],
  waits: [],
  settled: false,
  failed: false,
  ...e,
});

describe('the gate step, decided purely', () => {
  it('QA01 wakes only the holders of item waits, names an unheld member unknown, settles members and closes passed groups at one time', () => {
    const waits = [wait('APP-1', 'holder', 'k1'), wait('APP-2', 'holder', 'k2'), wait('grp-1', 'driver', 'k3')];
    const step = decideGateStep({
      runId: 'dr-1',
      stage: 'qa',
      gate: gate([member(1, 'ada'), member(2, null)]),
      evaluation: evaluation({
        waits,
        members: [
          { issueNumber: 1, item: 'APP-1', state: 'waiting', plans: [], waits: [] },
          { issueNumber: 3, item: 'APP-3', state: 'settled', plans: [], waits: [] },
        ],
        groups: [
          { id: 'grp-1', planId: 'smoke', runLevel: false, covered: [], state: 'passed', cases: [], triage: null },
        ],
        failureReviews: [{ verdictId: 7, subject: 'APP-1', caseId: 'a' }],
      }),
      deliveringExecution: false,
      now: 1000,
    });
    expect(step).toEqual({
      at: 1000,
      settles: false,
      failureReviews: [{ verdictId: 7, subject: 'APP-1', caseId: 'a', runId: 'dr-1', stage: 'qa', at: 1000 }],
      wakes: [
        {
          wait: waits[0],
          wake: {
            runId: 'dr-1',
            stage: 'qa',
            recipient: 'ada',
            subject: 'APP-1',
            waitKey: 'k1',
            reason: 'qa_case_missing',
            wokenAt: 1000,
          },
        },
        {
          wait: waits[1],
          wake: {
            runId: 'dr-1',
            stage: 'qa',
            recipient: 'unknown',
            subject: 'APP-2',
            waitKey: 'k2',
            reason: 'qa_case_missing',
            wokenAt: 1000,
          },
        },
      ],
      settledMembers: [3],
      passedGroups: ['grp-1'],
      waits,
    });
  });

  it('DX05 a settled stage waits while a deployment-stage execution still delivers to it', () => {
    const input = { runId: 'dr-1', stage: 'qa', gate: gate([]), evaluation: evaluation({ settled: true }), now: 5 };
    expect(decideGateStep({ ...input, deliveringExecution: true }).settles).toBe(false);
    expect(decideGateStep({ ...input, deliveringExecution: false }).settles).toBe(true);
  });
});
