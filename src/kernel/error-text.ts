// Anything thrown, as the text people read: an Error's message, or the value itself.

/** What was thrown, in words: an Error's message, anything else as text. */
export const errorText = (err: unknown): string => (err instanceof Error ? err.message : String(err));
