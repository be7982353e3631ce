// LD05: the runs.stack column, a lander's stack as text: the claim PR heads merged onto its base before its own.

/** LD05: one claim PR head in a lander's stack. */
export interface StackMember {
  pr: number;
  head: string;
}

/** A stack as its column holds it: `12:<sha> 15:<sha>`, in merge order. */
export const encodeStack = (stack: readonly StackMember[]): string => stack.map((m) => `${m.pr}:${m.head}`).join(' ');

/** The column's text back as members; a word that is not `N:<sha>` is a corrupt row, and says so. */
export function decodeStack(text: string): StackMember[] {
  return text
    .split(' ')
    .filter(Boolean)
    .map((word) => {
      const m = /^(\d+):([0-9a-f]{4,64})$/i.exec(word);
      if (!m) throw new Error(`runs.stack holds ${JSON.stringify(word)}, which is not <pr>:<sha>`);
      return { pr: Number(m[1]), head: m[2]! };
    });
}
