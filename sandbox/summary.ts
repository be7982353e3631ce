import type { Closeout } from '../src/store/delivery/closeouts.js';
import type { Run } from '../src/store/fleet/runs.js';
import type { Store } from '../src/store/store.js';
import type { DemoTask } from './demo-repo.js';
import type { ForgeRepo } from './forge-server.js';
import { reasonOf } from '../src/http/pages/dashboard-parts.js';

// The sandbox's end table: for each issue, its runs, verdicts, merge and delivery.

export interface IssueSummary {
  number: number;
  title: string;
  state: 'merged' | 'stuck' | 'open';
  /** Each run; a fix says why it started (TR33: a lander rejection, a review by @login, a command by @login). */
  runs: { id: string; kind: string; outcome: string; why: string | null; failed: string | null }[];
  verdicts: string[];
  merge: string;
  /** The deployment run that took it, its QA result, and its close-out ('-' before delivery). */
  deployment: string;
  qa: string;
  closeout: string;
  /** Why it, its claim PR or its fix waits now, as the last pass said (a wait for money, say), or null. */
  wait: string | null;
}

export interface SummaryDeps {
  runs: readonly Run[];
  store: Store;
  tasks: readonly DemoTask[];
  repo: ForgeRepo;
  issueState: (number: number) => Promise<IssueSummary['state']>;
  /** What the last pass passed over (the fleet report's). */
  waiting?: readonly { subject: string | null; code: string; message: string }[];
}

/** Each demo issue as the end table shows it, read from yoke's store and the forge. */
export async function summarizeIssues(deps: SummaryDeps): Promise<IssueSummary[]> {
  const closeouts = new Map<string, Closeout[]>();
  for (const r of await deps.store.deploymentRuns.list()) closeouts.set(r.id, await deps.store.closeouts.forRun(r.id));
  const states = await Promise.all(deps.tasks.map((_, idx) => deps.issueState(idx + 1)));
  const { store } = deps;
  const deliveries = await Promise.all(
    (await store.deploymentRuns.list()).map(async (run) => ({
      run,
      members: await store.deploymentRuns.members(run.id),
      qa: await store.qa.memberStages(run.id, 'staging-qa'),
    })),
  );
  return deps.tasks.map((task, idx) => {
    const number = idx + 1;
    const issue = deps.repo.issues.get(number)!;
    const pulls = [...deps.repo.issues.values()].filter(
      (i) => i.pull && new RegExp(`Closes #${number}\\b`).test(i.body),
    );
    const prNumbers = new Set(pulls.map((p) => p.number));
    const mine = deps.runs.filter(
      (r) => r.issueNumber === number || (r.prNumber !== null && prNumbers.has(r.prNumber)),
    );
    const merged = pulls.find((p) => p.pull?.merged);
    const delivery = deliveries.find((d) => d.members.some((m) => m.issueNumber === number && m.removedAt === null));
    const run = delivery?.run;
    const qa = delivery?.qa.find((m) => m.issueNumber === number);
    const closed = run ? closeouts.get(run.id)?.find((c) => c.issueNumber === number) : undefined;
    return {
      number,
      title: issue.title,
      state: states[idx]!,
      runs: mine.map((r) => ({
        id: r.id,
        kind: r.kind,
        // A lander's outcome is its verdict, as the dashboard and `yoke runs list` say it.
        outcome:
          r.kind === 'lander' && r.verdict
            ? r.verdict === 'reject'
              ? 'rejected'
              : 'accepted'
            : (r.outcome ?? r.status),
        why: r.kind === 'fix' ? r.why : null,
        // A run that failed says why, whole: the contained process's own words when it could not start.
        failed: r.status === 'ended' && r.outcome !== 'success' ? reasonOf(r, Infinity) || null : null,
      })),
      // LD01, LD05: each verdict is for a head on a base, after the PRs stacked ahead of it: `accept@head/base+#7`.
      verdicts: mine
        .filter((r) => r.verdict)
        .map(
          (r) =>
            `${r.verdict}@${r.headSha?.slice(0, 7)}${r.baseSha ? `/${r.baseSha.slice(0, 7)}` : ''}${r.stack.map((m) => `+#${m.pr}`).join('')}`,
        ),
      merge: merged ? `#${merged.number} → ${merged.pull!.mergeCommitSha!.slice(0, 7)}` : '-',
      deployment: run ? `${run.id} (${run.status})` : '-',
      qa: qa ? (qa.settledAt !== null ? 'accepted' : qa.refusal ? 'refused' : 'waiting') : '-',
      closeout: closed ? (closed.state === 'closed' ? `delivered #${number}` : closed.state) : '-',
      wait: waitOf(deps.waiting ?? [], [`issue#${number}`, ...[...prNumbers].map((n) => `pr#${n}`)]),
    };
  });
}

/** The first wait the last pass gave any of these subjects, as `code: message`. */
function waitOf(waiting: NonNullable<SummaryDeps['waiting']>, subjects: string[]): string | null {
  const w = waiting.find((x) => x.subject !== null && subjects.includes(x.subject));
  return w ? `${w.code}: ${w.message}` : null;
}

/** `text` after `head`, folded at `width` columns, each further line indented as far as `head` is long. */
function fold(head: string, text: string, width: number): string {
  const lines: string[] = [];
  let line = head;
  for (const word of text.split(' ')) {
    if (line.length > head.length && line.length + 1 + word.length > width) {
      lines.push(line);
      line = ' '.repeat(head.length) + word;
    } else line = line.length > head.length ? `${line} ${word}` : line + word;
  }
  return [...lines, line].join('\n');
}

/** What the end table's notations mean, said once under it. */
export const SUMMARY_LEGEND = [
  'Reading it: runs are kind:outcome in order, a fix with [why it started]. A verdict',
  "accept@HEAD/BASE+#N is a lander's verdict on HEAD (the claim PR's commit), judged on BASE (main as",
  'it was then) with PR #N merged onto it first (a stack). "close-out delivered #1": a deployment run',
  'shipped it to production, and yoke closed issue #1.',
].join('\n');

/** The end table, as a block per issue that fits 100 columns: what happened to it, its runs and verdicts, its delivery, and why any run failed. */
export function formatSummary(rows: IssueSummary[]): string {
  const WIDTH = 100;
  const pad = (label: string) => `   ${label.padEnd(10)} `;
  return rows
    .map((r) => {
      const lines = [`#${r.number} ${r.title}: ${r.state}${r.merge === '-' ? '' : ` as ${r.merge}`}`];
      const row = (label: string, text: string) => lines.push(fold(pad(label), text, WIDTH));
      row(
        'runs',
        r.runs.map((x) => `${x.kind}${x.why ? `[${x.why.replace(/^an? /, '')}]` : ''}:${x.outcome}`).join(' ') || '-',
      );
      if (r.verdicts.length) row('verdicts', r.verdicts.join(' '));
      if (r.deployment !== '-') row('delivery', `${r.deployment}, QA ${r.qa}, close-out ${r.closeout}`);
      for (const x of r.runs) if (x.failed) row('failed', `${x.id}: ${x.failed}`);
      if (r.state === 'open' && r.wait) row('waits', r.wait);
      return lines.join('\n');
    })
    .join('\n');
}
