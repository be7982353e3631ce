import type { RepoConfig } from '../config/repo-config.js';
import type { RepoName, RepoRef } from '../forge/types.js';
import type { RepoState } from '../store/fleet/repos.js';
import type { Store } from '../store/store.js';

// The rules about one repository's standing, each in one place.

/** SP15: paused from the threshold until an explicit reset. */
export const isPaused = (state: Pick<RepoState, 'pausedSince'>): boolean => state.pausedSince !== null;

/** The operator's switch wins; otherwise the opt-in file's `auto`. */
export const autoLoopOn = (state: Pick<RepoState, 'autoLoop'>, config: Pick<RepoConfig, 'auto'>): boolean =>
  state.autoLoop ?? config.auto;

/** A repository yoke has seen with an installation, as a reference the forge takes. */
export async function repoRefOf(store: Store, name: RepoName): Promise<RepoRef | null> {
  const state = await store.repos.get(name);
  return state ? refOfState(state) : null;
}

/** The reference of a repository row already read (a sweep over `repos.list()` asks nothing more of the store). */
export function refOfState(state: Pick<RepoState, 'fullName' | 'installationId'>): RepoRef | null {
  const [owner, repo] = state.fullName.split('/');
  if (state.installationId === null || !owner || !repo) return null;
  return { owner, name: repo, fullName: state.fullName, installationId: state.installationId };
}

/** The state a repository has before its first row is written (a pass reads before it writes). */
export function unseenRepoState(repo: RepoRef, now: number): RepoState {
  return {
    fullName: repo.fullName,
    installationId: repo.installationId,
    autoLoop: null,
    consecutiveFailures: 0,
    pausedSince: null,
    disabledReason: null,
    disabledNotified: null,
    firstSeenAt: now,
    updatedAt: now,
  };
}
