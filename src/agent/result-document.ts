import { createHash } from 'node:crypto';
import { z } from 'zod';

// A run's result, as it travels: through yoke's API (`POST /yoke/api/runs/:id/result`,
// the run's credential in the request), or back through GitHub as a workflow
// artifact that yoke downloads (YOKE_RUNS_REACH=github). The artifact holds the
// result's exact text and an OIDC token of the run whose audience names yoke and
// that text's sha256: the token vouches for those bytes and no others, so who
// carried the artifact, or read it on the way, changes nothing.

export const SUMMARY_LIMIT = 20_000;

/** The artifact a run's deliver (or report) job uploads, and the file in it. */
export const RESULT_ARTIFACT = 'yoke-result';
export const RESULT_FILE_NAME = 'result.json';
/** The most yoke reads of a result artifact. */
export const RESULT_ARTIFACT_LIMIT = 256 * 1024;

const Cost = z
  .object({
    usd: z.number().min(0).max(100_000),
    input_tokens: z.number().int().min(0),
    output_tokens: z.number().int().min(0),
  })
  .strict();

const Sha = (what: string) => z.string().regex(/^[0-9a-f]{40}$/, `${what} is a 40-hex commit id`);

const resultFields = {
  outcome: z.enum(['success', 'failure']),
  verdict: z.enum(['accept', 'reject']).optional(),
  /** The commit the lander judged: a verdict counts only for the head yoke dispatched it on. */
  head_sha: Sha('head_sha').optional(),
  summary: z.string().max(SUMMARY_LIMIT, `summary is limited to ${SUMMARY_LIMIT} characters`).optional(),
  /** What the run cost, as its agent counted it. */
  cost: Cost.optional(),
};

/** A result reported through yoke's API. */
export const RunResult = z.object(resultFields).strict();
export type RunResult = z.infer<typeof RunResult>;

/** What the deliver job pushed, for yoke to open the claim PR from (AFK) or move the claim PR's branch to (fix). */
export const HandedPush = z
  .object({
    branch: z.string().regex(/^yoke\/[\w.-]{1,200}$/, 'push.branch is a yoke/ branch'),
    commit: Sha('push.commit'),
    base: Sha('push.base'),
    title: z.string().max(1000).optional(),
  })
  .strict();
export type HandedPush = z.infer<typeof HandedPush>;

/** A result handed back through GitHub: it names its run, and a delivered one what it pushed. */
export const HandedResult = z
  .object({ run_id: z.string().regex(/^[\w-]{1,100}$/), ...resultFields, push: HandedPush.optional() })
  .strict();
export type HandedResult = z.infer<typeof HandedResult>;

/** The artifact's file: the result's exact text, and the token that vouches for it. */
export const ResultDocument = z
  .object({ result: z.string().max(RESULT_ARTIFACT_LIMIT), token: z.string().max(8192) })
  .strict();
export type ResultDocument = z.infer<typeof ResultDocument>;

/** The OIDC audience of a handed-back result: yoke's audience and the sha256 of the result's exact text. */
export function resultAudience(audience: string, resultText: string): string {
  const digest = createHash('sha256').update(resultText, 'utf8').digest('hex');
  return `${audience.replace(/\/+$/, '')}/yoke/results/${digest}`;
}
