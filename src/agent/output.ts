// Output of code yoke does not control (a validation's tail, an agent's
// message), shown in yoke's comments as inert text: a fence longer than any
// run of backticks inside it, collapsed under a title.

export const OUTPUT_TAIL = 6000;

/** The last `limit` characters, starting at a line. */
export function tailOf(text: string, limit = OUTPUT_TAIL): string {
  const t = text.replace(/\r/g, '').trimEnd();
  if (t.length <= limit) return t;
  const cut = t.slice(-limit);
  const nl = cut.indexOf('\n');
  return nl >= 0 && nl < 200 ? cut.slice(nl + 1) : cut;
}

export function fenced(text: string): string {
  const fence = '`'.repeat(Math.max(3, ...[...text.matchAll(/`+/g)].map((m) => m[0].length + 1)));
  return `${fence}\n${text}\n${fence}`;
}

/** A collapsed block of output under a title (the verdict comment's failing output). */
export function collapsedOutput(title: string, text: string): string {
  const safeTitle = title.replace(/[<>&]/g, '');
  return `<details><summary>${safeTitle}</summary>\n\n${fenced(text)}\n\n</details>`;
}

/**
 * Words that would act if a parser read them: closing keywords with an issue
 * number, and `Yoke-Run:` trailers. A zero-width space after `#` and before
 * the trailer's colon keeps them readable and makes them count for nothing,
 * for yoke's parsers and GitHub's alike.
 */
export function defang(text: string): string {
  return text.replace(/#(?=\d)/g, '#\u200b').replace(/(Yoke-Run)\s*:/gi, '$1\u200b:');
}

/** Text someone else wrote, shown as a block: redacted by the caller, defanged, fenced (no mention, link, image or markup acts). */
export function inertBlock(text: string): string {
  return fenced(defang(text));
}

/** The same for text inside a line: a code span long enough for any backticks within, on one line. */
export function inertInline(text: string): string {
  const t = defang(text.replace(/\s+/g, ' ').trim());
  const ticks = '`'.repeat(Math.max(1, ...[...t.matchAll(/`+/g)].map((m) => m[0].length + 1)));
  const pad = t.startsWith('`') || t.endsWith('`') ? ' ' : '';
  return `${ticks}${pad}${t}${pad}${ticks}`;
}
