// The branches a run's work is pushed to, named by yoke and computed the same
// way by the server and by its runner (which needs no input to know them).

/** An AFK run's claim branch: the claim PR is opened from it. */
export const claimBranch = (issue: number, runId: string): string => `yoke/${issue}-${runId}`;

/**
 * Where a fix run's deliver job pushes when runs reach yoke through GitHub:
 * a push with the job's own token starts no workflow, so yoke then moves the
 * claim PR's branch there itself, as the app, and the PR's checks run.
 */
export const fixBranch = (runId: string): string => `yoke/fix-${runId}`;
