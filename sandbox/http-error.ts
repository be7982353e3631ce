/** An error the embedded forge answers with its status and GitHub's message. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** Headers the refusal carries (a rate limit's `retry-after`, say). */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}
