import type { IssueSummary } from './sandbox.js';

// The sandbox's end table: for each issue, its runs, verdicts, merge and delivery.

export function formatSummary(rows: IssueSummary[]): string {
  const delivered = rows.some((r) => r.deployment !== '-');
  const table = [['issue', 'title', 'state', 'runs', 'verdicts', 'merge', ...(delivered ? ['deployment run', 'QA', 'close-out'] : [])]];
  for (const r of rows) {
    table.push([`#${r.number}`, r.title, r.state, r.runs.map((x) => `${x.kind}:${x.outcome}`).join(' ') || '-', r.verdicts.join(' ') || '-', r.merge, ...(delivered ? [r.deployment, r.qa, r.closeout] : [])]);
  }
  const widths = table[0]!.map((_, c) => Math.max(...table.map((row) => row[c]!.length)));
  return table.map((row) => row.map((cell, c) => cell.padEnd(widths[c]!)).join('  ').trimEnd()).join('\n');
}
