import { z } from 'zod';

// TR33: what a run is told to fix or heed, as yoke sends it in the `rejection` input: the lander's report
// of the head it starts from (printed by the PR's own code) and what people with write access asked for
// (a review's text and its inline comments, a `/yoke fix` or `/yoke start` with instructions). A fix is
// always sent a brief, so nothing the lander's report says can pass for a writer's words.

const BriefComment = z.object({
  path: z.string(),
  line: z.number().nullable(),
  diffHunk: z.string(),
  body: z.string(),
});

const BriefAsk = z.object({
  source: z.enum(['review', 'command']),
  author: z.string().regex(/^[\w.[\]-]+$/),
  /** The head it was written on, when that is not the head the run starts from. */
  writtenOn: z.string().nullable(),
  text: z.string(),
  comments: z.array(BriefComment),
});
export type BriefAsk = z.infer<typeof BriefAsk>;

/** TR24: the issue the run works from, as it was approved: its number and the digest of its title and body. */
const Approved = z.object({ issue: z.number().int().positive(), digest: z.string().regex(/^[0-9a-f]{32}$/) }).strict();
export type Approved = z.infer<typeof Approved>;

export const FixBrief = z
  .object({ rejection: z.string().nullable(), asks: z.array(BriefAsk), approved: Approved.optional() })
  .strict();
export type FixBrief = z.infer<typeof FixBrief>;

/** A brief as yoke sent it; text that is not one (a yoke older than briefs) is the lander's rejection alone. */
export function readBrief(input: string | null): FixBrief {
  if (input === null || input === '') return { rejection: null, asks: [] };
  try {
    const parsed = FixBrief.safeParse(JSON.parse(input));
    if (parsed.success) return parsed.data;
  } catch {
    // not JSON: the rejection as plain text
  }
  return { rejection: input, asks: [] };
}
