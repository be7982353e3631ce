import type { RepoConfig } from '../config/repo-config.js';
import type { ClaimView, RepoRef, RepoSnapshot } from '../forge/types.js';
import { readVerdict, type VerdictReading } from '../forge/marker.js';
import type { RepoState } from '../store/repos.js';
import type { OpenRequest } from '../store/requests.js';
import type { Run } from '../store/runs.js';

/** Everything a decision about one repo may look at, read before deciding. */
export interface RepoFacts {
  repo: RepoRef;
  state: RepoState;
  config: RepoConfig;
  snapshot: RepoSnapshot;
  runs: readonly Run[];
  requests: readonly OpenRequest[];
  /** Open issues named by open start requests (they need not carry the AFK label). */
  startableIssues: ReadonlySet<number>;
  trustedLogins: ReadonlySet<string>;
  liveSubjects: ReadonlySet<string>;
}

export const CLAIM_LABEL = 'yoke:claim';
export const STUCK_LABEL = 'yoke:stuck';

export const isPaused = (state: RepoState): boolean => state.pausedSince !== null;

export const autoLoopOn = (facts: Pick<RepoFacts, 'state' | 'config'>): boolean => facts.state.autoLoop ?? facts.config.auto;

export function verdictOf(facts: RepoFacts, claim: ClaimView): VerdictReading {
  return readVerdict(claim.comments, claim.pull.headSha, facts.trustedLogins);
}

export const isClaim = (claim: ClaimView): boolean => claim.pull.labels.includes(CLAIM_LABEL) && !claim.pull.draft;
