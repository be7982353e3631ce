import { describe, expect, it } from 'vitest';
import { issueSubject, parseSubject, pullSubject, sameLogin, sameRepo, subjectText } from '../../src/kernel/ids.js';

// Identifiers as GitHub has them: repository names and logins compare without
// case, and a subject is a structure, written `issue#N` or `pr#N` only when
// stored or shown.

describe('identifiers', () => {
  it('a repository is one name whatever its case, and nothing is the same as a missing name', () => {
    expect(sameRepo('Acme/API', 'acme/api')).toBe(true);
    expect(sameRepo('acme/api', 'acme/api-v2')).toBe(false);
    expect(sameRepo(null, 'acme/api')).toBe(false);
    expect(sameRepo(undefined, undefined)).toBe(false);
    expect(sameLogin('Octo-Cat', 'octo-cat')).toBe(true);
  });

  it('a subject is read back as the structure it was written from, and other text is not one', () => {
    expect(parseSubject(issueSubject(12))).toEqual({ kind: 'issue', number: 12 });
    expect(parseSubject(pullSubject(7))).toEqual({ kind: 'pr', number: 7 });
    expect(subjectText({ kind: 'pr', number: 7 })).toBe('pr#7');
    expect(['issue#', 'pr#x', 'issue#1 ', 'PR#1', 'run#1'].map(parseSubject)).toEqual([null, null, null, null, null]);
  });
});
