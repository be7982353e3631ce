import { makeRefusal } from '../../kernel/codes/table.js';
import { refusalText } from '../../kernel/reply.js';
import type { WaitingItem } from '../candidate.js';
import { subjectUrl } from './links.js';
import { parseSubject } from '../../kernel/ids.js';

// The dashboard issue (one per repository, labelled yoke:control)

export interface DashboardIssueView {
  repo: string;
  webUrl: string;
  autoLoop: boolean;
  /** Whether the loop's state comes from the opt-in file or a `/yoke auto` command. */
  autoFrom: 'config' | 'command';
  failures: number;
  threshold: number;
  paused: boolean;
  live: {
    id: string;
    kind: string;
    subject: string;
    title: string | null;
    /** Why a fix started (TR33): a lander rejection, a review or a command by @login. */
    why: string | null;
    workflowUrl: string | null;
  }[];
  waiting: WaitingItem[];
  stuck: { number: number; title: string }[];
  owed: { issue: number; pr: number }[];
  spentToday: number;
  dailyUsd: number | null;
  /** BU06: what each issue's runs reported they cost, costliest first (runs launched in the last 7 days). */
  issueCosts: { issue: number; usd: number; runs: number }[];
}

export function dashboardIssueTitle(repo: string): string {
  return `yoke dashboard for ${repo}`;
}

/** Markdown that shows an outside text as text: no markup, mention, or reference takes effect. */
const plain = (s: string): string => s.replace(/[\\`*_{}[\]()<>#+\-!|~@&]/g, (c) => `\\${c}`).replace(/\s+/g, ' ');

/** `issue#N` or `pr#N` as a link on GitHub. */
const workLink = (webUrl: string, repo: string, subject: string): string =>
  `[#${parseSubject(subject)?.number}](${subjectUrl(webUrl, repo, subject)})`;

/** The body yoke keeps current. It has no time in it, so it changes only when what it shows does. */
export function dashboardIssueBody(v: DashboardIssueView): string {
  const auto = v.autoLoop
    ? `**on** (${v.autoFrom === 'config' ? 'from `.github/yoke.yml`' : 'set by `/yoke auto on`'}). To stop starting new work: comment \`/yoke auto off\` here.`
    : `**off** (${v.autoFrom === 'config' ? '`auto: false` in `.github/yoke.yml`' : 'set by `/yoke auto off`'}). To start labelled work again: comment \`/yoke auto on\` here.`;
  const health = v.paused
    ? `**Paused:** ${refusalText(makeRefusal('repo_paused', { repo: v.repo, threshold: v.threshold }))}`
    : `**Failures:** ${v.failures} in a row; ${v.threshold} pause new work.${v.failures ? ' A success clears them, or comment `/yoke reset` here.' : ''}`;
  const live = v.live.length
    ? v.live.map(
        (r) =>
          `- \`${r.id}\` ${r.kind} ${workLink(v.webUrl, v.repo, r.subject)}${r.title ? ` ${plain(r.title)}` : ''}${r.why ? `, for ${plain(r.why)}` : ''}${r.workflowUrl ? ` · [workflow run](${r.workflowUrl})` : ''}`,
      )
    : ['_None._'];
  const waiting = v.waiting.length
    ? v.waiting.map(
        (w) =>
          `- ${w.subject ? `${workLink(v.webUrl, v.repo, w.subject)}${w.title ? ` ${plain(w.title)}` : ''}` : 'All its work'} (${w.stage.replace('_', ' ')}): \`${w.code}\` ${w.message} To recover: ${w.recovery}`,
      )
    : ['_Nothing is waiting: the last pass started everything it found._'];
  const stuck = v.stuck.length
    ? v.stuck.map(
        (p) =>
          `- ${workLink(v.webUrl, v.repo, `pr#${p.number}`)} ${plain(p.title)}: its fix attempts are used up. Repair it by hand, then comment \`/yoke land\` on it.`,
      )
    : ['_None._'];
  const owed = v.owed.length
    ? v.owed.map(
        (o) =>
          `- ${workLink(v.webUrl, v.repo, `issue#${o.issue}`)}, merged in ${workLink(v.webUrl, v.repo, `pr#${o.pr}`)}`,
      )
    : ['_None._'];
  const spend = `$${v.spentToday.toFixed(2)} reported today (UTC)${v.dailyUsd !== null ? ` of a daily budget of $${v.dailyUsd.toFixed(2)} (\`budget.daily_usd\`)` : ''}.`;
  return [
    `yoke keeps this issue current for ${v.repo}: it rewrites this text when what it shows changes. Comment \`/yoke status\` for more, or close the issue and set \`dashboard_issue: false\` in \`.github/yoke.yml\` to stop it.`,
    '',
    '### Auto loop',
    auto,
    '',
    health,
    '',
    '### Live runs',
    ...live,
    '',
    '### Waiting, in the order the next pass takes it',
    ...waiting,
    '',
    '### Stuck PRs',
    ...stuck,
    '',
    '### Delivery owed',
    ...owed,
    '',
    '### Spend',
    spend,
    ...(v.issueCosts.length
      ? [
          '',
          'What each issue cost this week (its AFK runs, landers and fixes, as they reported):',
          ...v.issueCosts.map(
            (c) => `- ${workLink(v.webUrl, v.repo, `issue#${c.issue}`)}: $${c.usd.toFixed(2)} over ${c.runs} run(s)`,
          ),
        ]
      : []),
  ].join('\n');
}
