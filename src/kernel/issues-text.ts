import type { z } from 'zod';

/** zod's issues as people read them: `field: what is wrong`, joined by `; `; `whole` names an issue about the whole value. */
export function issuesText(error: z.ZodError, whole: string): string {
  return error.issues.map((i) => `${i.path.join('.') || whole}: ${i.message}`).join('; ');
}
