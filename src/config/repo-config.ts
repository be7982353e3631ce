import { z } from 'zod';
import { described } from './described.js';
import { issueLines } from './suggest.js';
import { isRecord } from '../kernel/guards.js';

// `.github/yoke.yml`: a repository's opt-in. Probot's config loader reads it
// (so `_extends` brings organisation defaults); this schema decides whether
// what it read is usable. Unknown keys are refused so a typo is never silent.

export const CONFIG_PATH = '.github/yoke.yml';

/** Whether a push's commits added, changed or removed the opt-in file (so its cached reading is stale). */
export function touchesOptInFile(
  commits: readonly { added?: readonly string[]; modified?: readonly string[]; removed?: readonly string[] }[],
): boolean {
  return commits.some((c) => [...(c.added ?? []), ...(c.modified ?? []), ...(c.removed ?? [])].includes(CONFIG_PATH));
}

const minutes = z
  .number()
  .int()
  .min(1)
  .max(24 * 60);

const HOST_GLOB = /^(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$/i;

/** Host names, or `*.` globs for subdomains, as a network allowlist takes them. */
const hostList = (setting: string) =>
  z
    .array(z.string().regex(HOST_GLOB, `${setting} lists host names such as registry.npmjs.org or *.pythonhosted.org`))
    .max(100);

export const RepoConfig = z
  .object(
    described(
      {
        afk_label: z.string().min(1).max(50).default('yoke:afk'),
        auto: z.boolean().default(true),
        prefix: z
          .string()
          .regex(
            /^[A-Z][A-Z0-9]{0,9}$/,
            'prefix must be 1-10 capital letters or digits, starting with a letter (e.g. APP)',
          )
          .optional(),
        budget_minutes: z
          .object(
            described(
              { afk: minutes.default(60), lander: minutes.default(20), fix: minutes.default(45) },
              {
                afk: 'minutes an agent run for a labelled issue may take',
                lander: 'minutes a lander run (validating a claim PR) may take',
                fix: 'minutes a fix run (answering a rejection or a review) may take',
              },
            ),
          )
          .strict()
          .default({ afk: 60, lander: 20, fix: 45 }),
        autoland: z
          .object(
            described(
              {
                enabled: z.boolean().default(false),
                merge_method: z.enum(['merge', 'squash', 'rebase']).default('squash'),
                stack_depth: z.number().int().min(1).max(20).default(4),
                fast_forward: z.boolean().default(false),
              },
              {
                enabled: 'merge a claim PR once its lander accepts it, at the head the lander judged',
                merge_method: 'how an accepted claim PR is merged: merge, squash or rebase',
                // LD05
                stack_depth:
                  'how many accepted-to-be claim PRs one lander validates stacked on the base (1: each alone)',
                // LD03
                fast_forward:
                  "land by moving the base branch to the very commit the lander validated (a compare-and-swap); needs yoke's app to bypass the branch's rules",
              },
            ),
          )
          .strict()
          .default({ enabled: false, merge_method: 'squash', stack_depth: 4, fast_forward: false }),
        fix_forward: z
          .object(
            described(
              { enabled: z.boolean().default(false), max_attempts: z.number().int().min(1).max(10).default(2) },
              {
                enabled: 'start a fix run when a lander rejects a claim PR',
                max_attempts: 'fix runs one claim PR may get (review-driven fixes count too)',
              },
            ),
          )
          .strict()
          .default({ enabled: false, max_attempts: 2 }),
        /** TR33: a writer's review that requests changes on a claim PR starts a fix run (counted among fix_forward.max_attempts). */
        fix: z
          .object(
            described(
              { on_review: z.boolean().default(true) },
              // TR33
              { on_review: "a writer's review that requests changes on a claim PR starts a fix run" },
            ),
          )
          .strict()
          .default({ on_review: true }),
        launcher: z
          .object(
            described(
              {
                workflow: z
                  .string()
                  .regex(/^[\w.-]+\.ya?ml$/, 'launcher.workflow is a file name in .github/workflows, e.g. yoke-run.yml')
                  .default('yoke-run.yml'),
                ref: z.string().min(1).optional(),
              },
              {
                workflow: "the workflow file under .github/workflows that runs yoke's runs",
                ref: 'the branch or tag the workflow is dispatched on (default: the default branch)',
              },
            ),
          )
          .strict()
          .default({ workflow: 'yoke-run.yml' }),
        /**
         * BU01: what this repository may spend, a day and a month (UTC), counted by the pass as it launches: a run
         * reserves its whole limit, so spent plus reserved never passes either. new_work_share: the part of each
         * that new work may take, leaving the rest for landers and fixes.
         */
        budget: z
          .object(
            described(
              {
                daily_usd: z
                  .number()
                  .positive('budget.daily_usd is a positive number of US dollars, e.g. 25')
                  .optional(),
                monthly_usd: z
                  .number()
                  .positive('budget.monthly_usd is a positive number of US dollars, e.g. 400')
                  .optional(),
                new_work_share: z
                  .number()
                  .gt(0, 'budget.new_work_share is a fraction above 0 and at most 1, e.g. 0.8')
                  .max(1, 'budget.new_work_share is a fraction above 0 and at most 1, e.g. 0.8')
                  .optional(),
              },
              {
                daily_usd: 'what runs launched in one UTC day may cost, in US dollars (spent plus reserved)',
                monthly_usd: 'what runs launched in one UTC month may cost, in US dollars (spent plus reserved)',
                new_work_share:
                  'the part of each budget new work may take (0 to 1), leaving the rest for landers and fixes',
              },
            ),
          )
          .strict()
          .refine((b) => b.daily_usd !== undefined || b.monthly_usd !== undefined, {
            message: 'budget needs daily_usd or monthly_usd (US dollars), e.g. budget: { daily_usd: 25 }',
          })
          .optional(),
        /** What an agent run may spend: its turns, and dollars per run (BU02: reserved whole against the budgets as it launches). */
        agent: z
          .object(
            described(
              {
                max_turns: z.number().int().min(1).max(10_000).default(60),
                max_usd: z
                  .number()
                  .positive('agent.max_usd is a positive number of US dollars per run, e.g. 5')
                  .optional(),
                network: z
                  .object(
                    described(
                      { allow: hostList('agent.network.allow').default([]) },
                      { allow: "host names (or *. globs) the agent's tools may reach besides the model's" },
                    ),
                  )
                  .strict()
                  .default({ allow: [] }),
              },
              {
                max_turns: 'the most turns one agent run may take',
                max_usd:
                  'the most one agent run may spend, in US dollars (reserved whole against the budgets as it launches)',
                // TR20
                network: "what the agent's tools may reach on the network",
              },
            ),
          )
          .strict()
          .default({ max_turns: 60, network: { allow: [] } }),
        /** TR35: hosts a lander's validate.sh (the PR's tests) may reach, as agent.network.allow; by default the agent's. */
        validate: z
          .object(
            described(
              {
                network: z
                  .object(
                    described(
                      { allow: hostList('validate.network.allow') },
                      { allow: "host names (or *. globs) a lander's validate.sh may reach" },
                    ),
                  )
                  .strict(),
              },
              // TR35
              { network: "what a lander's validate.sh (the PR's tests) may reach; by default what the agent may" },
            ),
          )
          .strict()
          .optional(),
        /**
         * TR14: globs of files a claim PR may not change without a person's approval, on top of the
         * defaults (`.github/**`, the agents' settings), which cannot be taken away.
         */
        protected_paths: z
          .array(
            z
              .string()
              .min(1)
              .max(200)
              .regex(/^[^\s]+$/, 'protected_paths are globs without spaces, e.g. "deploy/**"'),
          )
          .max(100)
          .default([]),
        /** Whether yoke keeps a dashboard issue (labelled yoke:control) for the repository. */
        dashboard_issue: z.boolean().default(true),
        // Parsed on its own (config/delivery.ts): a bad delivery section refuses delivery, never the engine.
        delivery: z.unknown().optional(),
      },
      {
        afk_label: 'the label that hands an issue to an agent run',
        auto: "the auto loop's default: agent runs start for labelled issues on their own (toggle with /yoke auto on|off)",
        prefix: "the item prefix QA uses for this repository's items (APP-12), 1-10 capital letters or digits",
        budget_minutes: 'how long each kind of run may take, in minutes',
        autoland: 'landing accepted claim PRs (docs/landing.md)',
        fix_forward: 'fix runs for rejected claim PRs',
        fix: 'fix runs for reviews that request changes',
        launcher: "the GitHub Actions workflow yoke's runs are dispatched to",
        budget: "what this repository's runs may spend (docs/budgets.md)",
        agent: 'what an agent run may spend and reach',
        validate: "what a lander's validate.sh may reach",
        protected_paths:
          "globs of files a claim PR may not change without a person's approval, besides the defaults (.github/**, the agents' settings)",
        dashboard_issue: 'keep a dashboard issue (labelled yoke:control) for the repository',
        delivery: 'deployment runs: their stages, QA plans and who steers them (docs/configuration.md)',
      },
    ),
  )
  .strict();
export type RepoConfig = z.infer<typeof RepoConfig>;

export type RepoConfigResult =
  { state: 'absent' } | { state: 'valid'; config: RepoConfig } | { state: 'invalid'; reason: string };

/** Turns what the config loader returned into a usable config or a readable reason. */
export function parseRepoConfig(raw: unknown): RepoConfigResult {
  if (raw === null || raw === undefined) return { state: 'absent' };
  if (!isRecord(raw)) {
    return {
      state: 'invalid',
      reason: `${CONFIG_PATH} must be a YAML mapping of settings (\`key: value\` lines), not ${Array.isArray(raw) ? 'a list' : typeof raw === 'string' ? `text (${JSON.stringify(raw.slice(0, 40))})` : typeof raw}`,
    };
  }
  const { _extends: _ignored, ...rest } = raw;
  const parsed = RepoConfig.safeParse(rest);
  if (parsed.success) return { state: 'valid', config: parsed.data };
  const reasons = issueLines(RepoConfig, parsed.error.issues, rest, (path) =>
    path.length ? path.join('.') : CONFIG_PATH,
  );
  return { state: 'invalid', reason: `${CONFIG_PATH} is not valid: ${reasons.join('; ')}` };
}

export function defaultRepoConfig(): RepoConfig {
  return RepoConfig.parse({});
}
