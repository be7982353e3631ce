// The exact commands that move a QA wait, as the source document names them.

export function qaCommands(repo: string, run: string, stage: string) {
  const at = `--stage ${stage}`;
  return {
    itemPlan: (item: string) => `yoke qa plan run --item ${item} ${at}`,
    itemCase: (item: string, caseId: string) => `yoke qa case run --item ${item} ${at} --case ${caseId}`,
    itemManualCase: (item: string, caseId: string) =>
      `yoke qa case run --item ${item} ${at} --case ${caseId} --verdict pass --evidence @FILE`,
    groupPlan: (plan: string) => `yoke qa plan run --deployment-run-id ${run} ${at} --plan ${plan}`,
    groupManualCase: (plan: string, caseId: string) =>
      `yoke qa case run --deployment-run-id ${run} ${at} --plan ${plan} --case ${caseId} --verdict pass --evidence @FILE`,
    /** QA12: a merged code fix needs a new run on a later commit that takes over this one. */
    rework: () => `yoke deployment-runs create ${repo} --commit LATER_SHA --supersedes ${run}`,
    /** QA12: environment or flaky failures: rerun the pinned commit. */
    retry: (commit: string, plan: string) =>
      `git checkout ${commit} && yoke qa plan run --deployment-run-id ${run} ${at} --plan ${plan}`,
    /** QA13: maintainers only; discharges the case. */
    waive: (plan: string, caseId: string) =>
      `yoke qa waive --deployment-run-id ${run} ${at} --plan ${plan} --case ${caseId} --reason "..."`,
    /** QA13: the item leaves the run; its delivery stays owed. */
    remove: (item: string) => `yoke deployment-runs remove ${run} --item ${item} --reason "..."`,
    deployStage: () => `yoke deploy stage run ${run} ${stage}`,
    get: () => `yoke deployment-runs get ${run}`,
  };
}
