import { fieldOf, textField } from '../kernel/guards.js';

// What a GitHub error means to yoke, decided in one place.

export type GitHubErrorKind =
  /** 404 / 410: the thing is not there (or not visible to this installation). */
  | 'missing'
  /** 403 / 405 / 409 / 422: GitHub's answer is no; retrying will not change it. */
  | 'refused'
  /** Anything else: a fault (network, 5xx, auth) that a later attempt may get past. */
  | 'fault';

export interface ClassifiedError {
  kind: GitHubErrorKind;
  status: number | null;
  message: string;
}

export function classifyGitHubError(err: unknown): ClassifiedError {
  const given = fieldOf(err, 'status');
  const status = typeof given === 'number' ? given : null;
  const message =
    textField(fieldOf(fieldOf(err, 'response'), 'data'), 'message') ?? textField(err, 'message') ?? String(err);
  if (status === 404 || status === 410) return { kind: 'missing', status, message };
  if (status === 403 || status === 405 || status === 409 || status === 422) return { kind: 'refused', status, message };
  return { kind: 'fault', status, message };
}

/** GitHub's answer, or null when the thing is not there; other errors go on up. */
export async function unlessMissing<T>(read: () => Promise<T>, alsoMissing: readonly number[] = []): Promise<T | null> {
  try {
    return await read();
  } catch (err) {
    const e = classifyGitHubError(err);
    // GitHub answers 422 "No commit found" for a SHA it does not have.
    if (e.kind === 'missing' || (e.status !== null && alsoMissing.includes(e.status))) return null;
    throw err;
  }
}
