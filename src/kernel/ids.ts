// Identifiers as GitHub has them, said once. A repository's full name is one
// name whatever its case (GitHub answers `Acme/API` and `acme/api` alike), and
// so is a login; compare them only through these. What a run works on, its
// subject, is an issue or a pull request: a structure, written `issue#N` or
// `pr#N` only where it is stored or shown.

/** Whether two repository full names (`owner/name`) are the same repository, as GitHub compares them. */
export const sameRepo = (a: string | null | undefined, b: string | null | undefined): boolean =>
  a !== null && a !== undefined && b !== null && b !== undefined && a.toLowerCase() === b.toLowerCase();

/** Whether two GitHub logins are the same account (logins are case-insensitive). */
export const sameLogin = (a: string, b: string): boolean => a.toLowerCase() === b.toLowerCase();

/** What a run works on: an issue, or a pull request. */
export type SubjectRef = { kind: 'issue' | 'pr'; number: number };
/** A subject as it is stored and keyed: `issue#N` or `pr#N`. */
export type Subject = `issue#${number}` | `pr#${number}`;

export const issueSubject = (n: number): Subject => `issue#${n}`;
export const pullSubject = (n: number): Subject => `pr#${n}`;
export const subjectText = (s: SubjectRef): Subject =>
  s.kind === 'issue' ? issueSubject(s.number) : pullSubject(s.number);

/** A stored subject read back; null for text that is not one. */
export function parseSubject(text: string): SubjectRef | null {
  const m = /^(issue|pr)#(\d+)$/.exec(text);
  return m ? { kind: m[1] === 'issue' ? 'issue' : 'pr', number: Number(m[2]) } : null;
}
