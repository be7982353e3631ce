// Items: an opted-in repository's issue N, named PREFIX-N with the prefix of
// its opt-in file (or #N without one).

export function formatItem(prefix: string | undefined, issueNumber: number): string {
  return prefix ? `${prefix}-${issueNumber}` : `#${issueNumber}`;
}

/** The issue number an item reference names, or null when it is not one of this repository's. */
export function parseItem(prefix: string | undefined, ref: string): number | null {
  const m = /^(?:([A-Z][A-Z0-9]{0,9})-|#)?(\d{1,9})$/.exec(ref.trim());
  if (!m) return null;
  if (m[1] !== undefined && m[1] !== prefix) return null;
  const n = Number(m[2]);
  return n > 0 ? n : null;
}
