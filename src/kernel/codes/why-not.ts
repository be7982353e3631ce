import { code } from './define.js';

// Why a piece of waiting work is not running now. The spawn pass and its
// producers return these with the work they pass over; the fleet report, the
// CLI, the dashboard issue and the web dashboard show them as they are.
// Part of the one table in src/codes.ts.

export const WHY_NOT_CODES = {
  at_cap: code<{ repo: string; live: number; cap: number }>({
    status: 429,
    message: (p) => `Waits for a slot: ${p.live} run(s) are live and ${p.repo} may have at most ${p.cap} at once.`,
    recovery: () =>
      'Nothing to do: it starts when a run ends, after work further down the pipeline. To run more at once, raise YOKE_GLOBAL_CAP or YOKE_REPO_CAPS.',
  }),
  in_flight: code<{ repo: string; subject: string }>({
    status: 409,
    message: (p) => `${p.subject} in ${p.repo} already has a live run.`,
    recovery: () => 'Nothing to do: yoke looks at it again when that run ends (`yoke fleet report` lists live runs).',
  }),
  lander_attempts_used_up: code<{ repo: string; number: number; sha: string; attempts: number }>({
    status: 409,
    message: (p) =>
      `yoke gave up validating #${p.number} of ${p.repo} at ${p.sha.slice(0, 7)}: ${p.attempts} lander run(s) ended without a verdict.`,
    recovery: (p) => `Push a new commit to #${p.number}, or comment \`/yoke land\` on it to try this head again.`,
  }),
  base_unread: code<{ repo: string; number: number; branch: string }>({
    status: 503,
    message: (p) =>
      `#${p.number} of ${p.repo} waits for a lander: GitHub did not say where its base branch ${p.branch} is, and a verdict counts only for the base it judged.`,
    recovery: () => 'Nothing to do: the next pass reads the branch again.',
  }),
  merge_queue_unread: code<{ repo: string; number: number; branch: string }>({
    status: 503,
    message: (p) =>
      `#${p.number} of ${p.repo} waits: a ruleset requires GitHub's merge queue on ${p.branch}, and GitHub would not show yoke that queue, so nothing there is validated or queued for now.`,
    recovery: () =>
      "Grant yoke's app the Merge queues permission (read and write: the app's settings, then accept the new permission on the installation); `yoke doctor` says whether it is granted. yoke reads the queue again every pass.",
  }),
  issue_blocked: code<{ repo: string; number: number; blockers: string }>({
    status: 409,
    message: (p) =>
      `#${p.number} of ${p.repo} is not started: it is blocked by ${p.blockers}, still open (GitHub's issue dependencies).`,
    recovery: (p) =>
      `Nothing to do: it starts once ${p.blockers} ${p.blockers.includes(',') ? 'are' : 'is'} closed. To start it sooner, remove the dependency (the issue's Relationships → Blocked by).`,
  }),
  issue_has_sub_issues: code<{ repo: string; number: number; open: number; label: string }>({
    status: 409,
    message: (p) =>
      `#${p.number} of ${p.repo} is not worked as one piece: ${p.open} of its sub-issues ${p.open === 1 ? 'is' : 'are'} still open.`,
    recovery: (p) =>
      `Label its sub-issues ${p.label} to have them worked one by one; #${p.number} starts once they are closed. If it is one piece of work after all, remove its sub-issues.`,
  }),
  stack_full: code<{ repo: string; number: number; ahead: string; depth: number }>({
    status: 429,
    message: (p) =>
      `#${p.number} of ${p.repo} waits for a lander: ${p.ahead} ahead of it are being validated stacked on the base, ${p.depth} deep, and it is validated on top of what of them lands.`,
    recovery: () =>
      'Nothing to do: it is validated as soon as the stack ahead lands or splits. To stack deeper, raise autoland.stack_depth in .github/yoke.yml.',
  }),
  budget_reserved: code<{
    repo: string;
    budget: string;
    held: string;
    limit: string;
    reserve: string;
    until: string;
    setting: string;
    /** Its reservation alone is more than the whole budget: no wait ends it. */
    never: boolean;
    /** Live runs holding reservations in this budget: each gives back what it does not spend as it reports. */
    live: number;
    /** Ended runs that reported no cost, `id $usd`, comma-separated, and how many and how much. */
    unsettled: string;
    unsettledCount: number;
    unsettledUsd: string;
  }>({
    status: 429,
    message: (p) =>
      `Waits for money: ${p.budget} holds $${p.held} of its $${p.limit} (what runs reported they spent, and the reservations of runs that have not reported), and this run would reserve $${p.reserve}, its whole limit.`,
    recovery: (p) => {
      if (p.never)
        return `It cannot start under this budget: its limit of $${p.reserve} is more than the whole budget. Lower agent.max_usd in .github/yoke.yml to $${p.limit} or less, or raise ${p.setting}.`;
      const ends = [
        p.live > 0
          ? `when ${p.live === 1 ? 'the live run' : `one of the ${p.live} live runs`} holding a reservation in it ends under its limit and gives the rest back`
          : null,
        `when the budget starts again at ${p.until}`,
      ].filter((e) => e !== null);
      const settle = p.unsettledCount
        ? ` ${p.unsettledCount === 1 ? '1 run' : `${p.unsettledCount} runs`} ended without reporting what they spent and still hold $${p.unsettledUsd} of it (${p.unsettled}): once you know what one spent, \`yoke runs settle RUN --usd N\` gives the rest back.`
        : '';
      return `${settle ? 'It' : 'Nothing to do: it'} starts ${ends.join(', or ')}.${settle} To allow more, raise ${p.setting}; to let more runs share it, lower agent.max_usd.`;
    },
  }),
  fix_asks_exhausted: code<{ number: number; attempts: number; by: string }>({
    status: 409,
    message: (p) =>
      `${p.by} asked for changes on #${p.number}, but it has had its ${p.attempts} fix runs, so no agent makes them.`,
    recovery: (p) =>
      `Make the changes on #${p.number}'s branch by hand (the lander validates the new head), or raise \`fix_forward.max_attempts\` in .github/yoke.yml and comment \`/yoke fix <what to change>\` on #${p.number}.`,
  }),
  issue_edited_since_label: code<{ repo: string; number: number; label: string; claim?: number }>({
    status: 409,
    message: (p) =>
      `#${p.number} of ${p.repo} was edited after a writer approved it (its ${p.label} label, or \`/yoke start\`), so yoke does not ${p.claim ? `fix #${p.claim} from it` : 'start on it'} unseen: anyone who can edit an issue could have changed what the agent is told.`,
    recovery: (p) =>
      p.claim
        ? `Read #${p.number} as it is now; if it is what the agent should do, comment \`/yoke start\` on it (you need write access): that confirms it, and #${p.claim}'s fix runs go on from it (no new run starts).`
        : `Read #${p.number} as it is now; if it is what the agent should do, comment \`/yoke start\` on it (you need write access): that confirms it, and yoke starts.`,
  }),
  request_budget: code<{ repo: string; installation: number; points: number }>({
    status: 429,
    message: (p) =>
      `${p.repo} was not read this pass: installation ${p.installation} has ${p.points} point${p.points === 1 ? '' : 's'} left of this minute's request budget on its busiest GitHub endpoint, and work further down the pipeline went first.`,
    recovery: () =>
      'Nothing to do: it is read on a later pass once the minute has room. Landers and merges always go first; fewer repositories or a slower idle probe (YOKE_IDLE_PROBE_SECONDS) leave more room.',
  }),
  reader_pending: code<{ repo: string; installation: number; reader: string }>({
    status: 503,
    message: (p) =>
      `${p.repo} was not read this pass: yoke process ${p.reader} reads installation ${p.installation}, and has not shared what it found there yet.`,
    recovery: () =>
      'Nothing to do: the pass decides on it once that process has read it, within a tick. If that process is gone, another takes its installations within two ticks; `yoke doctor` shows which process reads which installation.',
  }),
} as const;

/** The codes a piece of waiting work can carry. */
export const WHY_NOT = [
  'at_cap',
  'in_flight',
  'repo_paused',
  'repo_disabled',
  'lander_attempts_used_up',
  'base_unread',
  'merge_queue_unread',
  'stack_full',
  'issue_blocked',
  'issue_has_sub_issues',
  'fix_attempts_exhausted',
  'fix_asks_exhausted',
  'request_budget',
  'reader_pending',
  'budget_reserved',
  'issue_edited_since_label',
] as const;
