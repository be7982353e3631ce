import type { DeploymentView } from '../delivery/runs/view.js';

/** A deployment run as a person reads it in a terminal. */
export function formatDeploymentRun(v: DeploymentView): string {
  const lines = [
    `${v.id} · ${v.repo} at ${v.commit.slice(0, 12)} · ${v.status}${v.currentStage ? ` at ${v.currentStage}` : ''}${v.trackingIssue ? ` · tracking #${v.trackingIssue}` : ''}${v.supersedes ? ` · takes over ${v.supersedes}` : ''}`,
    'stages:',
    ...v.stages.map(
      (s) => `  ${s.current ? '>' : ' '} ${s.name} (${s.kind}): ${s.state}${s.detail ? ` · ${s.detail}` : ''}`,
    ),
    'members:',
    ...v.members.map(
      (m) =>
        `  ${m.item} (#${m.issue}, PR #${m.pr}): ${
          m.removed
            ? 'removed'
            : Object.entries(m.stages)
                .map(([s, st]) => `${s} ${st}`)
                .join(', ') || 'not in QA yet'
        } · delivery ${m.delivery}`,
    ),
  ];
  if (v.owed.length) {
    lines.push('closing: every stage is done; these members are still owed their close-out (yoke retries them):');
    for (const o of v.owed) lines.push(`  ${o.item}: ${o.detail}${o.command ? `\n    ${o.command}` : ''}`);
  }
  const groups = v.stages.flatMap((s) => s.groups.map((g) => ({ stage: s.name, g })));
  if (groups.length) {
    lines.push('groups:');
    for (const { stage, g } of groups)
      lines.push(
        `  ${g.id} ${g.planId}${g.runLevel ? ' (run-level)' : ''} at ${stage}: ${g.state} · covers ${g.covered.join(', ') || 'none'}`,
      );
  }
  const waits = v.stages.find((s) => s.current)?.waits ?? [];
  if (waits.length) {
    lines.push('waiting on:');
    for (const w of waits) lines.push(`  ${w.detail}\n    ${w.command}`);
  } else if (v.next.length) {
    lines.push('next:', ...v.next.map((c) => `  ${c}`));
  }
  if (v.verdicts.length) {
    lines.push('verdicts:');
    for (const x of v.verdicts)
      lines.push(
        `  ${x.stage} ${x.subject} ${x.plan}/${x.case}: ${x.result} (${x.source}, ${x.by}${x.replaces ? `, replaces ${x.replaces}` : ''})`,
      );
  }
  return lines.join('\n');
}
