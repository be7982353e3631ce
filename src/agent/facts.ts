import { z } from 'zod';
import { readBrief, type Approved, type BriefAsk } from './brief.js';
import { parseSubject } from '../kernel/ids.js';

// The run's facts, as the runner gets them: the dispatch inputs, which the
// workflow hands over as YOKE_* variables, or the command launcher's
// environment (the same names). Parsed once, with each problem named.

export const LIMIT_DEFAULTS = { max_turns: 60 } as const;

const Limits = z
  .object({
    max_turns: z.number().int().min(1).max(10_000).default(LIMIT_DEFAULTS.max_turns),
    max_usd: z.number().min(0).nullable().default(null),
    network_allow: z.array(z.string().max(253)).max(100).default([]),
  })
  .strict();

const Facts = z.object({
  YOKE_RUN_ID: z
    .string()
    .regex(/^[\w-]{1,100}$/, 'YOKE_RUN_ID is the run id yoke dispatched (letters, digits, - and _)'),
  YOKE_RUN_KIND: z.enum(['afk_manual', 'afk_auto', 'fix'], {
    message: 'YOKE_RUN_KIND is afk_manual, afk_auto or fix (a lander runs no agent)',
  }),
  YOKE_SUBJECT: z.string().regex(/^(issue|pr)#\d+$/, 'YOKE_SUBJECT is issue#N or pr#N'),
  YOKE_DEADLINE: z.iso.datetime({ offset: true, message: 'YOKE_DEADLINE is the budget deadline in ISO 8601' }),
  // Reaching through GitHub it only names yoke (the audience of the run's tokens), and may be no URL at all.
  YOKE_API_URL: z.string().min(1, "YOKE_API_URL is yoke's public URL"),
  YOKE_HEAD_SHA: z
    .string()
    .regex(/^([0-9a-f]{40})?$/, 'YOKE_HEAD_SHA is a 40-hex commit id')
    .optional(),
  YOKE_LIMITS: z.string().optional(),
  YOKE_REACH: z
    .enum(['api', 'github'], { message: 'YOKE_REACH is api or github (how the run reaches yoke)' })
    .optional(),
  YOKE_REJECTION: z.string().optional(),
  YOKE_REPO: z
    .string()
    .regex(/^[\w.-]+\/[\w.-]+$/)
    .optional(),
  GITHUB_REPOSITORY: z
    .string()
    .regex(/^[\w.-]+\/[\w.-]+$/)
    .optional(),
});

export interface RunFacts {
  runId: string;
  kind: 'afk_manual' | 'afk_auto' | 'fix';
  repo: string;
  issueNumber: number | null;
  prNumber: number | null;
  headSha: string | null;
  deadline: number;
  apiUrl: string;
  /** How the run reaches yoke: its API at apiUrl, or back through GitHub (apiUrl is then only the tokens' audience). */
  reach: 'api' | 'github';
  limits: { maxTurns: number; maxUsd: number | null; networkAllow: string[] };
  rejection: string | null;
  /** TR33: what people with write access asked for (reviews, `/yoke fix`, `/yoke start` with text). */
  asks: BriefAsk[];
  /** TR24: the issue as it was approved; the runner works from nothing else. */
  approved?: Approved;
}

export type FactsResult = { ok: true; facts: RunFacts } | { ok: false; error: string };

/** The run's limits, from the dispatch's `limits` input (YOKE_LIMITS), each problem named. */
export function readLimits(
  text: string | undefined,
): { ok: true; limits: RunFacts['limits'] } | { ok: false; error: string } {
  let json: unknown = {};
  try {
    json = text ? JSON.parse(text) : {};
  } catch {
    return { ok: false, error: 'YOKE_LIMITS is not JSON (yoke sends {"max_turns":N,"max_usd":N})' };
  }
  const limits = Limits.safeParse(json);
  if (!limits.success)
    return {
      ok: false,
      error: `YOKE_LIMITS: ${limits.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    };
  return {
    ok: true,
    limits: { maxTurns: limits.data.max_turns, maxUsd: limits.data.max_usd, networkAllow: limits.data.network_allow },
  };
}

export function readRunFacts(env: Record<string, string | undefined>): FactsResult {
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = Facts.safeParse(present);
  if (!parsed.success)
    return {
      ok: false,
      error: parsed.error.issues
        .map((i) =>
          i.code === 'invalid_type' && i.input === undefined ? `${String(i.path[0])} is not set` : i.message,
        )
        .join('; '),
    };
  const e = parsed.data;
  if ((e.YOKE_REACH ?? 'api') === 'api' && !URL.canParse(e.YOKE_API_URL))
    return { ok: false, error: "YOKE_API_URL is yoke's public URL" };
  const repo = e.YOKE_REPO ?? e.GITHUB_REPOSITORY;
  if (!repo)
    return {
      ok: false,
      error: 'neither YOKE_REPO nor GITHUB_REPOSITORY is set: the runner does not know its repository',
    };
  const limits = readLimits(e.YOKE_LIMITS);
  if (!limits.ok) return limits;
  const subject = parseSubject(e.YOKE_SUBJECT);
  if (!subject || (e.YOKE_RUN_KIND === 'fix') !== (subject.kind === 'pr'))
    return {
      ok: false,
      error: `YOKE_SUBJECT ${e.YOKE_SUBJECT} does not fit a ${e.YOKE_RUN_KIND} run (an AFK run works on issue#N, a fix on pr#N)`,
    };
  if (e.YOKE_RUN_KIND === 'fix' && !e.YOKE_HEAD_SHA)
    return { ok: false, error: 'YOKE_HEAD_SHA is not set: a fix run works from the claim PR head it was launched for' };
  return {
    ok: true,
    facts: {
      runId: e.YOKE_RUN_ID,
      kind: e.YOKE_RUN_KIND,
      repo,
      issueNumber: subject.kind === 'issue' ? subject.number : null,
      prNumber: subject.kind === 'pr' ? subject.number : null,
      headSha: e.YOKE_HEAD_SHA || null,
      deadline: Date.parse(e.YOKE_DEADLINE),
      apiUrl: e.YOKE_API_URL.replace(/\/+$/, ''),
      reach: e.YOKE_REACH ?? 'api',
      limits: limits.limits,
      ...readBrief(e.YOKE_REJECTION ?? null),
    },
  };
}
