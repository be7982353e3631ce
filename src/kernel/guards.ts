// Reading values whose type is not known yet (parsed JSON, anything thrown,
// a raw header) by checking them, not by casting: each answers what the value
// is, or that it is not.

/** A plain object (not null, not an array): its fields may be read as unknowns. */
export const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** A plain object's fields, or null for anything else. */
export const recordOf = (v: unknown): Record<string, unknown> | null => (isRecord(v) ? v : null);

/** One field of a value that may be an object (a thrown error's `code`, a parsed body's `repo`): undefined otherwise. */
export const fieldOf = (v: unknown, key: string): unknown => (isRecord(v) ? v[key] : undefined);

/** A field that must be text (an errno's `code`, a header): undefined when it is anything else. */
export const textField = (v: unknown, key: string): string | undefined => {
  const f = fieldOf(v, key);
  return typeof f === 'string' ? f : undefined;
};

/** Whether a value is one of these (a string-literal union's values): narrows it to the union. */
export const isOneOf = <const T extends string>(values: readonly T[], v: unknown): v is T =>
  values.some((x) => x === v);

/**
 * An object's own keys, typed as its keys. The one place this is assumed: the
 * objects it is given are declared tables (no extra keys at run time).
 */
export const keysOf = <T extends object>(o: T): (keyof T & string)[] => Object.keys(o) as (keyof T & string)[];

/** An object's own entries, typed by its keys (a declared table, as `keysOf`). */
export const entriesOf = <T extends object>(o: T): [keyof T & string, T[keyof T]][] => keysOf(o).map((k) => [k, o[k]]);
