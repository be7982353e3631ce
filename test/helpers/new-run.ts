import type { NewRun } from '../../src/store/fleet/runs.js';

/** A live AFK run as the store records a launch: `subject` in `repo`, launched at 1 with its deadline at 2. */
export const newRun = (id: string, subject: string, repo = 'acme/api') =>
  ({
    id,
    repo,
    kind: 'afk_auto' as const,
    subject,
    issueNumber: 1,
    prNumber: null,
    headSha: null,
    launchedAt: 1,
    budgetDeadline: 2,
    launcher: 'command',
    launcherRef: null,
    secretHash: null,
    capAtLaunch: 2,
    liveAtLaunch: 1,
  }) satisfies NewRun;
