import { z } from 'zod';

// The bodies of the routes whose handlers live in http/ (the delivery half's
// own bodies are declared next to the code that reads them).

export const AutoBody = z.object({ enabled: z.boolean() }).strict();
export const CreateBody = z
  .object({
    repo: z.string().regex(/^[\w.-]+\/[\w.-]+$/, 'repo is owner/name'),
    commit: z
      .string()
      .regex(/^[0-9a-f]{4,40}$/i, 'commit is a SHA')
      .optional(),
    items: z.array(z.string().min(1).max(30)).max(500).optional(),
    supersedes: z.string().min(1).max(100).optional(),
    creator: z.string().min(1).max(100).optional(),
  })
  .strict();
export const RemoveBody = z.object({ reason: z.string().min(1).max(2000) }).strict();
/** BU02: what an ended run spent, in dollars, as an operator read it. */
export const SettleBody = z.object({ usd: z.number().finite().min(0).max(100_000) }).strict();
