// The three ways yoke lands an accepted PR (docs/landing.md's table), and the ruleset each needs on GitHub:
// declared once, for `yoke init --landing` to print and `yoke doctor` to check a repository's rules against.

/** The status check yoke's lander posts on each PR head (and each merge group), which a ruleset requires. */
export const LANDER_CONTEXT = 'yoke/lander';

/** The three ways yoke lands an accepted PR (docs/landing.md's table), as `yoke init --landing` names them. */
export const LANDINGS = ['pr', 'fast-forward', 'queue'] as const;
export type Landing = (typeof LANDINGS)[number];

/** Where the App ID goes in a printed ruleset when yoke does not know it. */
const APP_ID_PLACEHOLDER = 'APP_ID';

/**
 * LD04: GitHub's merge queue, as yoke lands through it: every group's merge commit checked (ALLGREEN), small
 * groups built soon, an hour for yoke/lander to report on a group.
 */
export const MERGE_QUEUE_RULE = {
  type: 'merge_queue',
  parameters: {
    check_response_timeout_minutes: 60,
    grouping_strategy: 'ALLGREEN',
    max_entries_to_build: 5,
    max_entries_to_merge: 5,
    merge_method: 'SQUASH',
    min_entries_to_merge: 1,
    min_entries_to_merge_wait_minutes: 5,
  },
};

/**
 * TR14, TR43: the ruleset that makes yoke/lander required on the default branch, with nobody (yoke's app included)
 * bypassing it, and the check's source pinned to yoke's app (`integration_id`): a `yoke/lander` status posted by a
 * writer or by a workflow's token does not satisfy it. Unknown, the App ID is a placeholder to replace.
 */
export function landerRuleset(appId: number | null, landing: Landing = 'pr'): string {
  const json = JSON.stringify({
    name: landing === 'queue' ? 'yoke: require yoke/lander and the merge queue' : 'yoke: require yoke/lander',
    target: 'branch',
    enforcement: 'active',
    bypass_actors: [],
    conditions: { ref_name: { include: ['~DEFAULT_BRANCH'], exclude: [] } },
    rules: [
      {
        type: 'required_status_checks',
        parameters: {
          strict_required_status_checks_policy: false,
          required_status_checks: [{ context: LANDER_CONTEXT, integration_id: appId ?? -1 }],
        },
      },
      ...(landing === 'queue' ? [MERGE_QUEUE_RULE] : []),
    ],
  });
  return appId === null ? json.replace('"integration_id":-1', `"integration_id":${APP_ID_PLACEHOLDER}`) : json;
}
