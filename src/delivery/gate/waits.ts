import type { Refusal } from '../../kernel/codes/table.js';

// What a stage of a deployment run waits on, each said once: its code, who is
// told, the words they read and the command that moves it. A wait's key is
// made in one place (waitOf): what exactly is awaited, so an unchanged wait
// keeps its key and is not told twice.

export const WAIT_CODES = [
  'item_case_pending',
  'item_case_failed',
  'review_pending',
  'group_pending',
  'group_failed',
  'awaits_group',
  'qa_configuration_refused',
  'qa_stage_empty',
  'closeout_refused',
] as const;
export type WaitCode = (typeof WAIT_CODES)[number];

export interface Wait {
  /** What exactly is awaited; an unchanged wait keeps its key. */
  key: string;
  code: WaitCode;
  /** holder: the member's holder (item QA only, QA10); driver: the run's driver; reviewer: someone independent of the PR. */
  recipient: 'holder' | 'driver' | 'reviewer';
  /** The item or group the wait is about. */
  subject: string;
  detail: string;
  command: string;
}

/**
 * A wait, its key made from its subject, its code and what exactly it is about. A stage's own wait is keyed as
 * `stage` with its refusal's code (`keyAs`), so a stage renamed or a code remapped does not make it new.
 */
export function waitOf(w: Omit<Wait, 'key'> & { about: string; keyAs?: { subject: string; code: string } }): Wait {
  const { keyAs, about, ...rest } = w;
  return { key: `${keyAs?.subject ?? w.subject}:${keyAs?.code ?? w.code}:${about}`, ...rest };
}

/** A shared plan failed at the pinned commit: the driver triages which items need code fixes. */
export const groupFailedWait = (
  group: { id: string; planId: string; targetCommit: string },
  failures: readonly { caseId: string; result: string }[],
  covered: readonly string[],
  retry: string,
): Wait =>
  waitOf({
    code: 'group_failed',
    recipient: 'driver',
    subject: group.id,
    about: failures.map((f) => f.caseId).join(','),
    detail: `shared plan ${group.planId} failed at ${group.targetCommit.slice(0, 12)} (${failures.map((f) => `${f.caseId}: ${f.result}`).join(', ')}); triage which of ${covered.join(', ')} need code fixes`,
    command: retry,
  });

/** A case of a driver-owned plan (shared, or the run's own) has no current pass. */
export const groupPendingWait = (
  group: { id: string; planId: string; runLevel: boolean },
  c: { caseId: string; title: string },
  command: string,
): Wait =>
  waitOf({
    code: 'group_pending',
    recipient: 'driver',
    subject: group.id,
    about: c.caseId,
    detail: `${group.runLevel ? 'run-level' : 'shared'} plan ${group.planId}, case ${c.caseId} (${c.title}) has no current pass`,
    command,
  });

/** QA02: the holder is told an item's refused QA configuration and its recovery. */
export const itemRefusedWait = (item: string, refusal: Refusal): Wait =>
  waitOf({
    code: 'qa_configuration_refused',
    recipient: 'holder',
    subject: item,
    about: refusal.message,
    detail: refusal.message,
    command: refusal.recovery,
  });

/** A case of an item's own plan has failed, or has no current pass (with the evidence it requires). */
export const itemCaseWait = (
  { item, planId }: { item: string; planId: string },
  c: { caseId: string; title: string; latest: { result: string } | null },
  failed: boolean,
  command: string,
): Wait =>
  waitOf({
    code: failed ? 'item_case_failed' : 'item_case_pending',
    recipient: 'holder',
    subject: item,
    about: `${planId}/${c.caseId}`,
    detail: failed
      ? `${item}'s plan ${planId}, case ${c.caseId} (${c.title}): latest verdict ${c.latest!.result}`
      : `${item}'s plan ${planId}, case ${c.caseId} (${c.title}) has no current pass${c.latest?.result === 'pass' ? ' with the evidence it requires' : ''}`,
    command,
  });

/** QA10: an item waits on a shared plan; the wait is the driver's, and the holder is not told. */
export const awaitsGroupWait = (
  item: string,
  plan: { planId: string; groupId: string | null },
  state: string,
  command: string,
): Wait =>
  waitOf({
    code: 'awaits_group',
    recipient: 'driver',
    subject: item,
    about: String(plan.groupId),
    detail: `${item} waits on shared plan ${plan.planId} (group ${plan.groupId}, ${state})`,
    command,
  });

/** QA04: an item needs an approval of its claim PR by a writer who is none of `not`. */
export const reviewPendingWait = (item: string, prNumber: number, not: readonly string[]): Wait =>
  waitOf({
    code: 'review_pending',
    recipient: 'reviewer',
    subject: item,
    about: String(prNumber),
    detail: `${item} needs an independent review of its claim PR #${prNumber}`,
    command: `Approve PR #${prNumber} at its merged head, as someone with write access other than ${[...new Set(not)].join(' and ') || 'its author'}.`,
  });

/** TR29: the stage itself is refused (nothing to check, or its configuration). */
export const stageRefusedWait = (stage: string, refusal: Refusal): Wait =>
  waitOf({
    code: refusal.code === 'qa_stage_empty' ? 'qa_stage_empty' : 'qa_configuration_refused',
    keyAs: { subject: 'stage', code: refusal.code },
    recipient: 'driver',
    subject: stage,
    about: refusal.message,
    detail: refusal.message,
    command: refusal.recovery,
  });

/** DX03: an item's close-out was refused; its holder is told why and what recovers it. */
export const closeoutRefusedWait = (item: string, refusal: Refusal): Wait =>
  waitOf({
    code: 'closeout_refused',
    recipient: 'holder',
    subject: item,
    about: refusal.message,
    detail: refusal.message,
    command: refusal.recovery,
  });
