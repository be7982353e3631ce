// Anything thrown, as the text people read: an Error's message, or the value itself.

/** What was thrown, in words: an Error's message, anything else as text. */
export const errorText = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/**
 * What was thrown, as the log keeps it: an Error's stack (its message first), anything else as text. TR07:
 * the process logger scrubs tokens from every string it writes, stacks included (kernel/log.ts).
 */
export const errorStack = (err: unknown): string => (err instanceof Error ? (err.stack ?? err.message) : String(err));

/** The network errors that mean a server could not be reached at all (not an answer it gave). */
const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'ECONNRESET',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/** The network error's code when what was thrown (or what caused it, however deep) is one, else null. */
export function unreachableCode(err: unknown, depth = 0): string | null {
  if (typeof err !== 'object' || err === null || depth > 5) return null;
  const code = 'code' in err ? err.code : undefined;
  if (typeof code === 'string' && UNREACHABLE.has(code)) return code;
  const errno = /\b(ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|ECONNRESET|EHOSTUNREACH|ENETUNREACH)\b/.exec(
    errorText(err),
  );
  if (errno) return errno[1]!;
  return unreachableCode('cause' in err ? err.cause : undefined, depth + 1);
}
