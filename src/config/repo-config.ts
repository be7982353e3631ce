import { z } from 'zod';
import { issueLines } from './suggest.js';

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
  .object({
    afk_label: z.string().min(1).max(50).default('yoke:afk'),
    auto: z.boolean().default(true),
    prefix: z
      .string()
      .regex(/^[A-Z][A-Z0-9]{0,9}$/, 'prefix must be 1-10 capital letters or digits, starting with a letter (e.g. APP)')
      .optional(),
    budget_minutes: z
      .object({ afk: minutes.default(60), lander: minutes.default(20), fix: minutes.default(45) })
      .strict()
      .default({ afk: 60, lander: 20, fix: 45 }),
    autoland: z
      .object({
        enabled: z.boolean().default(false),
        merge_method: z.enum(['merge', 'squash', 'rebase']).default('squash'),
        /** LD05: how many accepted-to-be claim PRs a lander validates stacked on the base at once (1: each alone). */
        stack_depth: z.number().int().min(1).max(20).default(4),
        /**
         * LD03: land by moving the base branch to the very commit the lander validated (a fast-forward, which
         * GitHub refuses if the branch moved: a compare-and-swap). Needs yoke's app to bypass the branch's rules.
         */
        fast_forward: z.boolean().default(false),
      })
      .strict()
      .default({ enabled: false, merge_method: 'squash', stack_depth: 4, fast_forward: false }),
    fix_forward: z
      .object({ enabled: z.boolean().default(false), max_attempts: z.number().int().min(1).max(10).default(2) })
      .strict()
      .default({ enabled: false, max_attempts: 2 }),
    /** TR33: a writer's review that requests changes on a claim PR starts a fix run (counted among fix_forward.max_attempts). */
    fix: z
      .object({ on_review: z.boolean().default(true) })
      .strict()
      .default({ on_review: true }),
    launcher: z
      .object({
        workflow: z
          .string()
          .regex(/^[\w.-]+\.ya?ml$/, 'launcher.workflow is a file name in .github/workflows, e.g. yoke-run.yml')
          .default('yoke-run.yml'),
        ref: z.string().min(1).optional(),
      })
      .strict()
      .default({ workflow: 'yoke-run.yml' }),
    /**
     * BU01: what this repository may spend, a day and a month (UTC), counted by the pass as it launches: a run
     * reserves its whole limit, so spent plus reserved never passes either. new_work_share: the part of each
     * that new work may take, leaving the rest for landers and fixes.
     */
    budget: z
      .object({
        daily_usd: z.number().positive('budget.daily_usd is a positive number of US dollars, e.g. 25').optional(),
        monthly_usd: z.number().positive('budget.monthly_usd is a positive number of US dollars, e.g. 400').optional(),
        new_work_share: z
          .number()
          .gt(0, 'budget.new_work_share is a fraction above 0 and at most 1, e.g. 0.8')
          .max(1, 'budget.new_work_share is a fraction above 0 and at most 1, e.g. 0.8')
          .optional(),
      })
      .strict()
      .refine((b) => b.daily_usd !== undefined || b.monthly_usd !== undefined, {
        message: 'budget needs daily_usd or monthly_usd (US dollars), e.g. budget: { daily_usd: 25 }',
      })
      .optional(),
    /** What an agent run may spend: its turns, and dollars per run (BU02: reserved whole against the budgets as it launches). */
    agent: z
      .object({
        max_turns: z.number().int().min(1).max(10_000).default(60),
        max_usd: z.number().positive('agent.max_usd is a positive number of US dollars per run, e.g. 5').optional(),
        /** TR20: hosts the agent's tools may reach besides the model's (package registries, say); `*.` allows subdomains. */
        network: z
          .object({
            allow: hostList('agent.network.allow').default([]),
          })
          .strict()
          .default({ allow: [] }),
      })
      .strict()
      .default({ max_turns: 60, network: { allow: [] } }),
    /** TR35: hosts a lander's validate.sh (the PR's tests) may reach, as agent.network.allow; by default the agent's. */
    validate: z
      .object({
        network: z
          .object({
            allow: hostList('validate.network.allow'),
          })
          .strict(),
      })
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
  })
  .strict();
export type RepoConfig = z.infer<typeof RepoConfig>;

export type RepoConfigResult =
  { state: 'absent' } | { state: 'valid'; config: RepoConfig } | { state: 'invalid'; reason: string };

/** Turns what the config loader returned into a usable config or a readable reason. */
export function parseRepoConfig(raw: unknown): RepoConfigResult {
  if (raw === null || raw === undefined) return { state: 'absent' };
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    return {
      state: 'invalid',
      reason: `${CONFIG_PATH} must be a YAML mapping of settings, not ${Array.isArray(raw) ? 'a list' : typeof raw}`,
    };
  }
  const { _extends: _ignored, ...rest } = raw as Record<string, unknown>;
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
