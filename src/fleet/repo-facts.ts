import type { RepoConfig } from '../config/repo-config.js';
import type { ClaimView, RepoRef, RepoView } from '../forge/types.js';
import { readVerdict, type VerdictReading } from '../forge/marker.js';
import type { RepoState } from '../store/repos.js';
import type { OpenRequest } from '../store/requests.js';
import type { Run } from '../store/runs.js';

/** Everything a decision about one repo may look at, read before deciding. */
export interface RepoFacts {
  repo: RepoRef;
  state: RepoState;
  config: RepoConfig;
  view: RepoView;
  runs: readonly Run[];
  requests: readonly OpenRequest[];
  /** Open issues named by open start requests (they need not carry the AFK label). */
  startableIssues: ReadonlySet<number>;
  trustedLogins: ReadonlySet<string>;
  /** Live subjects as the pass's liveness snapshot had them, before it launched anything. */
  liveSubjects: ReadonlySet<string>;
}

export const CLAIM_LABEL = 'yoke:claim';
export const STUCK_LABEL = 'yoke:stuck';

export function verdictOf(facts: RepoFacts, claim: ClaimView): VerdictReading {
  return readVerdict(claim.comments, claim.pull.headSha, facts.trustedLogins);
}

export const isClaim = (claim: ClaimView): boolean => claim.pull.labels.includes(CLAIM_LABEL) && !claim.pull.draft;
