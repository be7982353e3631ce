import type { Refusal } from '../../kernel/codes/table.js';
import type { QaCase } from '../../config/qa-plan.js';

// What the scoped-QA store keeps, record by record (qa.ts reads and writes them).

export interface Attachment {
  repo: string;
  issueNumber: number;
  planId: string;
  attachedBy: string;
  source: 'label' | 'command' | 'api';
  attachedAt: number;
}

export interface MemberStage {
  runId: string;
  stage: string;
  issueNumber: number;
  holder: string | null;
  prAuthor: string | null;
  refusal: Refusal | null;
  frozenAt: number;
  settledAt: number | null;
}

export interface MemberPlan {
  runId: string;
  stage: string;
  issueNumber: number;
  planId: string;
  owner: 'member' | 'group';
  groupId: string | null;
}

export interface PlanSnapshot {
  runId: string;
  planId: string;
  name: string;
  commit: string;
  cases: QaCase[];
}

export interface PlanGroup {
  id: string;
  runId: string;
  stage: string;
  planId: string;
  planName: string;
  /** QA16: pinned at creation; later plan edits never change them. */
  cases: QaCase[];
  targetCommit: string;
  coveredItemIds: number[];
  runLevel: boolean;
  state: 'open' | 'closed';
  outcome: 'passed' | 'superseded' | null;
  openedAt: number;
  closedAt: number | null;
}

export const QA_RESULTS = ['pass', 'fail', 'error', 'waived'] as const;
export type QaResult = (typeof QA_RESULTS)[number];

export interface QaVerdict {
  id: number;
  runId: string;
  stage: string;
  issueNumber: number | null;
  groupId: string | null;
  planId: string;
  caseId: string;
  commit: string;
  result: QaResult;
  evidence: string | null;
  source: string;
  replaces: string | null;
  recordedBy: string;
  recordedAt: number;
}

export type NewQaVerdict = Omit<QaVerdict, 'id'>;

export interface Wake {
  runId: string;
  stage: string;
  recipient: string;
  subject: string;
  waitKey: string;
  reason: string;
  wokenAt: number;
}
