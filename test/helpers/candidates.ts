import type { Candidate } from '../../src/fleet/candidate.js';

/** New AFK work on one issue, as the producers would hand the pass it (the races and the store tests launch these). */
export const newWorkCandidate = (repo: string, issue: number, subject = `issue#${issue}`): Candidate => ({
  stage: 'new_work',
  repo,
  installationId: 1,
  kind: 'afk_auto',
  subject,
  issueNumber: issue,
  prNumber: null,
  headSha: null,
  budgetMinutes: 5,
  requestId: null,
  why: 'race',
});
