import type { Refusal } from '../kernel/codes/table.js';
import { inertInline } from '../agent/output.js';

// Every comment the delivery half writes: tracking issues, QA notices,
// close-outs, and the protection rule's answer. Tests compare whole texts, so
// a change of wording is a deliberate change of this file.

/** DP03: yoke's answer to a protection-rule request, as GitHub shows it on the waiting workflow run. */
export function protectionComment(why: Refusal): string {
  return why.recovery === 'Nothing to do.'
    ? `yoke: ${why.message}`
    : `yoke: ${why.message} To move it: ${why.recovery}`;
}

// Deployment runs

export function trackingIssueTitle(v: { id: string; repo: string; commit: string }): string {
  return `Deployment run ${v.id}: ${v.repo} at ${v.commit.slice(0, 12)}`;
}

const STAGE_MARK: Record<string, string> = {
  succeeded: '✅',
  settled: '✅',
  failed: '❌',
  running: '⏳',
  waiting: '⏳',
  pending: '·',
  not_entered: '·',
};

/** The tracking issue's body: stages, members, and what moves the run now. Everything comes from the run's view. */
export function trackingIssueBody(v: TrackingView): string {
  const lines = [
    `yoke keeps this issue current for deployment run \`${v.id}\` of ${v.repo}, pinned at \`${v.commit}\`.`,
    '',
    `**Status:** ${v.status}${v.currentStage ? ` at stage \`${v.currentStage}\`` : ''}${v.creator ? ` · created by @${v.creator}` : ''}${v.supersedes ? ` · takes over \`${v.supersedes}\`` : ''}`,
    '',
    '### Stages',
    ...v.stages.flatMap((s) => [
      `- ${STAGE_MARK[s.state] ?? '·'} \`${s.name}\` (${s.kind}): ${s.state.replace('_', ' ')}${s.current ? ' ← current' : ''}${s.detail ? ` · ${inertInline(s.detail)}` : ''}`,
      ...(s.deployments ?? []).map(
        (d) =>
          `  - deployment [${d.id}](${d.url}) to \`${d.environment}\`: ${d.state.replace('_', ' ')}${d.logUrl ? ` · [log](${d.logUrl})` : ''}`,
      ),
    ]),
    '',
    '### Members',
    '| item | claim PR | QA | delivery |',
    '|---|---|---|---|',
    ...v.members.map(
      (m) =>
        `| ${m.item} (#${m.issue}) | #${m.pr} | ${
          m.removed
            ? `removed${m.removed.reason ? `: ${escapeCell(m.removed.reason)}` : ''}`
            : Object.entries(m.stages)
                .map(([s, st]) => `${s}: ${st}`)
                .join(', ') || '—'
        } | ${m.delivery} |`,
    ),
  ];
  const waits = v.stages.find((s) => s.current)?.waits ?? [];
  if (waits.length || v.next.length) {
    lines.push('', '### Waiting on');
    if (waits.length) for (const w of waits) lines.push(`- ${w.detail}: \`${w.command}\``);
    else for (const c of v.next) lines.push(`- \`${c}\``);
  }
  return lines.join('\n');
}

const escapeCell = (s: string) => s.replace(/[|\n\r]/g, ' ').slice(0, 200);

export interface TrackingView {
  id: string;
  repo: string;
  commit: string;
  status: string;
  creator: string | null;
  supersedes: string | null;
  currentStage: string | null;
  stages: {
    name: string;
    kind: string;
    state: string;
    current: boolean;
    detail: string | null;
    waits: { detail: string; command: string }[];
    deployments?: { id: number; environment: string; state: string; logUrl: string | null; url: string }[];
  }[];
  members: {
    item: string;
    issue: number;
    pr: number;
    removed: { reason: string | null } | null;
    stages: Record<string, string>;
    delivery: string;
  }[];
  next: string[];
}

export function qaAttached(item: string, planId: string, fresh: boolean): string {
  return fresh
    ? `Attached QA plan \`${planId}\` to ${item}. It becomes part of ${item}'s QA when ${item} next enters a QA stage.`
    : `QA plan \`${planId}\` was already attached to ${item}.`;
}

export function qaWaived(subject: string, plan: string, caseId: string, reason: string): string {
  return `Waived case \`${caseId}\` of plan \`${plan}\` for ${subject}: ${reason}`;
}

// QA notices

/** How a notice names its recipient: a person is mentioned, a yoke run or a driver is named. */
export function recipientMention(kind: string, id: string): string {
  if (id.startsWith('run:')) return `yoke run \`${id.slice(4)}\``;
  if (kind === 'driver') return `driver \`${id}\``;
  return `@${id}`;
}

const WHY: Record<string, (repo: string) => string> = {
  holder: () => '',
  driver: () => 'You are driving this deployment run.',
  creator: () => 'You created this deployment run, and it has no live driver to take this.',
  steering: (repo) => `You steer deliveries of ${repo}; neither a live driver nor the run's creator is taking this.`,
};

export interface NoticeFacts {
  kind: string;
  recipient: string;
  repo: string;
  run: string;
  stage: string;
  commit: string;
  subject: string;
  waits: readonly { detail: string; command: string }[];
}

/** A notice: who, what is awaited, the command that moves each wait, and how to hand it back. */
export function qaNotice(f: NoticeFacts): string {
  const why = WHY[f.kind]?.(f.repo) ?? '';
  return [
    `${recipientMention(f.kind, f.recipient)} deployment run \`${f.run}\` is waiting at stage \`${f.stage}\` for ${f.subject}.${why ? ` ${why}` : ''}`,
    '',
    ...f.waits.map((w) => `- ${w.detail}: \`${w.command}\``),
    '',
    `Run QA commands in a checkout of \`${f.commit}\`. To hand this back, comment \`/yoke qa decline\`.`,
  ].join('\n');
}

export function qaNoticeWithdrawn(kind: string, recipient: string, run: string, group: string): string {
  return `${recipientMention(kind, recipient)} withdrawn: group \`${group}\` of deployment run \`${run}\` closed, so nothing waits on it any more.`;
}

export function qaNoticeResolved(f: {
  kind: string;
  recipient: string;
  run: string;
  subject: string;
  stage: string;
}): string {
  const { kind, recipient, run, subject, stage } = f;
  return `${recipientMention(kind, recipient)} resolved: ${subject} no longer waits at stage \`${stage}\` of deployment run \`${run}\`.`;
}

export function closeoutNotice(f: {
  holder: string | null;
  item: string;
  issue: number;
  run: string;
  stage: string;
  commit: string;
  label: string;
  spend?: string | null;
}): string {
  const who = f.holder ? `${recipientMention('holder', f.holder)} ` : '';
  const text = `${who}${f.item} is delivered: deployment run \`${f.run}\` accepted it at stage \`${f.stage}\` on \`${f.commit}\`. Issue #${f.issue} is closed as completed and labelled \`${f.label}\`.`;
  return f.spend ? `${text}\n\n${f.spend}` : text;
}

export function qaDeclined(count: number): string {
  return `Declined ${count === 1 ? 'the notice' : `${count} notices`} on this thread. yoke passes ${count === 1 ? 'it' : 'them'} on: to the run's live driver, else its creator, else steering.`;
}
