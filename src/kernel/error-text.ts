// Anything thrown, as the text people read: an Error's message, or the value itself.

/** What was thrown, in words: an Error's message, anything else as text. */
export const errorText = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/**
 * What was thrown, as the log keeps it: an Error's stack (its message first), anything else as text. TR07:
 * the process logger scrubs tokens from every string it writes, stacks included (kernel/log.ts).
 */
export const errorStack = (err: unknown): string => (err instanceof Error ? (err.stack ?? err.message) : String(err));
