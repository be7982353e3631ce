import { code } from './define.js';

// BU02: what a run cost the budgets once it ended: settled by an operator, or reported late. Part of the one
// table in src/codes.ts.

export const MONEY_CODES = {
  run_settle_live: code<{ run: string }>({
    status: 409,
    message: (p) => `Run ${p.run} is still live: what it spends is counted as it reports.`,
    recovery: (p) =>
      `Nothing to do while it runs; if it ends without reporting what it spent, settle it then (\`yoke runs settle ${p.run} --usd N\`).`,
  }),
  run_already_costed: code<{ run: string; usd: string; how: string }>({
    status: 409,
    message: (p) => `Run ${p.run} already costs $${p.usd}: ${p.how}.`,
    recovery: () =>
      'Nothing to do: a run is settled once, and only when it ended without reporting what it spent (`yoke fleet report` lists those).',
  }),
  settle_usd_invalid: code<{ given: string }>({
    status: 400,
    message: (p) => `--usd is "${p.given}", which is not an amount of dollars.`,
    recovery: () =>
      "Give what the run spent, in dollars, from 0 up (e.g. `--usd 1.25`), as your model provider's usage page shows it.",
  }),
  run_unsettled: code<{ run: string; repo: string; kind: string; usd: string }>({
    status: 409,
    message: (p) =>
      `Run ${p.run} (${p.repo} ${p.kind}) ended without reporting what it spent, so the budgets still hold its reservation of $${p.usd}.`,
    recovery: (p) =>
      `Once you know what it spent (your model provider's usage page), \`yoke runs settle ${p.run} --usd N\` sets it and gives the rest back.`,
  }),
  run_reported_late: code<{ run: string; outcome: string; usd: string }>({
    status: 409,
    message: (p) =>
      `Run ${p.run} had already ended (${p.outcome}), so its result does not count; what it spent ($${p.usd}) is recorded against it.`,
    recovery: () => 'Nothing to do: the budgets now hold what it spent instead of its reservation.',
  }),
} as const;
