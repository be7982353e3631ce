import type { z } from 'zod';

// Every key of a file yoke reads says what it is for: an object's shape is
// given with one line per key, and the compiler refuses a key left without
// one. The lines reach `yoke config schema` (an editor shows them on hover).

/** The shape with each key described by its line. */
export function described<S extends Record<string, z.ZodType>>(shape: S, lines: { [K in keyof S]: string }): S {
  const out: Record<string, z.ZodType> = {};
  for (const key of Object.keys(shape)) out[key] = shape[key]!.describe(lines[key]!);
  // The same keys with the same schemas, each now carrying its description.
  return out as S;
}
