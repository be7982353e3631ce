// What yoke reads in the text of an issue, a PR or a commit message: the issues a PR closes, and the run a
// commit names. Only text outside fenced code blocks counts, as GitHub reads closing keywords.

const CLOSING_RE = /\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\s*:?\s+#(\d+)\b/gi;

/** A body without its fenced code blocks: what is quoted inside one (an agent's summary, say) says nothing. */
export function outsideFences(body: string): string {
  const out: string[] = [];
  let fence: string | null = null;
  for (const line of body.split('\n')) {
    const open = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence === null && open) fence = open;
    else if (fence !== null && open && open[0] === fence[0] && open.length >= fence.length && line.trim() === open)
      fence = null;
    else if (fence === null) out.push(line);
  }
  return out.join('\n');
}

export function parseClosingRefs(body: string): number[] {
  const out = new Set<number>();
  for (const m of outsideFences(body).matchAll(CLOSING_RE)) out.add(Number(m[1]));
  return [...out].sort((a, b) => a - b);
}

const TRAILER_RE = /^Yoke-Run:\s*([\w-]{1,100})\s*$/gm;

/** The `Yoke-Run:` trailer: the last one outside fenced blocks, as git reads a trailer from a message's end. */
export function parseYokeRunTrailer(body: string): string | null {
  return [...outsideFences(body).matchAll(TRAILER_RE)].at(-1)?.[1] ?? null;
}
