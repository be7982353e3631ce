import type { z } from 'zod';

/** A zod refinement's issue for every item whose name an earlier item of the list already used. */
export function refuseRepeats<T>(
  ctx: z.RefinementCtx,
  items: readonly T[],
  at: { list: string; field: string; what: string },
  nameOf: (item: T) => string,
): void {
  const seen = new Set<string>();
  items.forEach((item, i) => {
    const name = nameOf(item);
    if (seen.has(name))
      ctx.addIssue({ code: 'custom', path: [at.list, i, at.field], message: `the ${at.what} ${name} is used twice` });
    seen.add(name);
  });
}
