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

/** The value a zod issue's path points at in the input, if it is there. */
function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let at = input;
  for (const key of path) {
    if (at === null || typeof at !== 'object') return undefined;
    at = Reflect.get(at, key);
  }
  return at;
}

const quoted = (v: unknown) => JSON.stringify(v);

/**
 * An issue's message as a person reads it: "did you mean" for an unknown key
 * or a value close to an allowed one (a stage's `kind: deploi`), and a
 * missing setting called missing rather than "received undefined".
 */
export function issueMessage(schema: z.ZodType, issue: z.core.$ZodIssue, input?: unknown): string {
  if (issue.code === 'unrecognized_keys') {
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
  const value = valueAt(input, issue.path);
  const allowed =
    issue.code === 'invalid_value'
      ? issue.values
      : issue.code === 'invalid_union' && 'options' in issue && Array.isArray(issue.options)
        ? issue.options
        : null;
  if (allowed && value !== undefined) {
    const near = typeof value === 'string' ? closest(value, allowed.map(String)) : null;
    return `${quoted(value)} is not one of ${allowed.map(quoted).join(', ')}${near ? `; did you mean "${near}"?` : ''}`;
  }
  if (issue.code === 'invalid_type' && input !== undefined && value === undefined)
    return `missing: this setting is required (${issue.expected})`;
  return issue.message;
}

/**
 * The issues of a failed parse worth showing: a key reported missing is left
 * out when an unknown key beside it is its typo, since the did-you-mean
 * already says what to do.
 */
export function shownIssues(
  schema: z.ZodType,
  issues: readonly z.core.$ZodIssue[],
  input: unknown,
): z.core.$ZodIssue[] {
  const suggested = new Set<string>();
  for (const issue of issues)
    if (issue.code === 'unrecognized_keys') {
      const known = knownKeysAt(schema, issue.path);
      for (const k of issue.keys) {
        const near = closest(k, known);
        if (near) suggested.add(JSON.stringify([...issue.path.map(String), near]));
      }
    }
  return issues.filter(
    (i) =>
      !(
        i.code === 'invalid_type' &&
        valueAt(input, i.path) === undefined &&
        suggested.has(JSON.stringify(i.path.map(String)))
      ),
  );
}

/** Every issue shown, each as `field: message`. */
export function issueLines(
  schema: z.ZodType,
  issues: readonly z.core.$ZodIssue[],
  input: unknown,
  field: (path: readonly PropertyKey[]) => string,
): string[] {
  return shownIssues(schema, issues, input).map((i) => `${field(i.path)}: ${issueMessage(schema, i, input)}`);
}
