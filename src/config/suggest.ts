import type { z } from 'zod';

// A typo in a settings file gets a "did you mean": an unrecognised key is
// compared with the keys the schema knows at that place, as Renovate's config
// checker does. Shared by the opt-in file, its delivery section and QA plans.

/** Edit distance between two short strings (insertions, deletions, substitutions, adjacent swaps). */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}

/** The closest of `known` to `word`, when it is close enough to be a typo of it. */
export function closest(word: string, known: readonly string[]): string | null {
  const limit = Math.max(1, Math.floor(word.length / 3));
  let best: { key: string; d: number } | null = null;
  for (const key of known) {
    const d = editDistance(word.toLowerCase(), key.toLowerCase());
    if (d <= limit && (!best || d < best.d)) best = { key, d };
  }
  return best?.key ?? null;
}

type Def = {
  type?: string;
  shape?: Record<string, z.ZodType>;
  innerType?: z.ZodType;
  in?: z.ZodType;
  element?: z.ZodType;
  options?: z.ZodType[];
};
const defOf = (s: z.ZodType): Def => (s as unknown as { def: Def }).def;

/** The object keys a schema knows at a path (through defaults, optionals, pipes, arrays and unions). */
export function knownKeysAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  const def = defOf(schema);
  if (def.innerType) return knownKeysAt(def.innerType, path);
  if (def.type === 'pipe' && def.in) return knownKeysAt(def.in, path);
  if (def.type === 'union' && def.options) return [...new Set(def.options.flatMap((o) => knownKeysAt(o, path)))];
  if (path.length === 0) return def.shape ? Object.keys(def.shape) : [];
  const [head, ...rest] = path;
  if (def.type === 'array' && def.element && typeof head === 'number') return knownKeysAt(def.element, rest);
  const next = typeof head === 'string' ? def.shape?.[head] : undefined;
  return next ? knownKeysAt(next, rest) : [];
}

/** An issue's message, with "did you mean" for an unrecognised key close to a known one. */
export function issueMessage(schema: z.ZodType, issue: z.core.$ZodIssue): string {
  if (issue.code !== 'unrecognized_keys') return issue.message;
  const known = knownKeysAt(schema, issue.path);
  return issue.keys
    .map((k) => {
      const near = closest(k, known);
      return near
        ? `"${k}" is not a setting here; did you mean "${near}"?`
        : `"${k}" is not a setting here${known.length ? ` (the settings are: ${known.join(', ')})` : ''}`;
    })
    .join('; ');
}
