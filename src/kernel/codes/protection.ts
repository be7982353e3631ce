import { code } from './define.js';

// DP03: why yoke, as an environment's deployment protection rule, approved,
// rejected or left a request. Part of the one table in src/codes.ts; the
// message and recovery are the comment GitHub shows on the waiting workflow run.

export const PROTECTION_CODES = {
  protection_settled: code<{ run: string; environment: string; commit: string; gates: string; stage: string }>({
    status: 200,
    message: (p) =>
      `Deployment run ${p.run} settled ${p.gates} at ${p.commit}: ${p.environment} (stage ${p.stage}) may deploy it.`,
    recovery: () => 'Nothing to do.',
  }),
  protection_no_qa: code<{ repo: string; environment: string; stage: string }>({
    status: 200,
    message: (p) =>
      `Stage ${p.stage} of ${p.repo} deploys to ${p.environment} with no QA stage before it: yoke's rule has nothing to hold it for.`,
    recovery: () => 'Put a QA stage before it in `.github/yoke.yml` to gate it.',
  }),
  protection_unruled: code<{ repo: string; environment: string; answer: string }>({
    status: 200,
    message: (p) =>
      `No deploy stage of ${p.repo} deploys to ${p.environment}: yoke ${p.answer} (delivery.deployments.unruled_environments).`,
    recovery: (p) =>
      `Name ${p.environment} as a stage's environment in \`.github/yoke.yml\` to gate it, set \`delivery.deployments.unruled_environments\` to approve or ignore, or take yoke's rule off the environment.`,
  }),
  protection_event: code<{ repo: string; environment: string; event: string; events: string }>({
    status: 409,
    message: (p) =>
      `A job started by ${p.event} asked to deploy to ${p.environment} of ${p.repo}: yoke approves only a job started by ${p.events}, whose code is the commit it deploys (a job of another event may check out code QA never saw).`,
    recovery: (p) =>
      `Deploy to ${p.environment} from a workflow started by ${p.events} (\`on: workflow_dispatch\`, as yoke's driver starts it).`,
  }),
  protection_no_commit: code<{ repo: string; environment: string }>({
    status: 409,
    message: (p) =>
      `GitHub asked yoke about a deployment to ${p.environment} of ${p.repo} without naming its commit: yoke approves only a commit it knows QA settled.`,
    recovery: () => 'Re-run the workflow; if GitHub still names no commit, approve it by hand in the environment.',
  }),
  protection_no_run: code<{ repo: string; environment: string; commit: string; sha: string; gate: string }>({
    status: 409,
    message: (p) =>
      `No deployment run of ${p.repo} is pinned at ${p.commit}, so no ${p.gate} settled for it: ${p.environment} may not deploy it.`,
    recovery: (p) =>
      `Deliver that commit through yoke: \`yoke deployment-runs create ${p.repo} --commit ${p.sha}\`, then \`yoke watch deploy -- RUN-ID\`; or deploy a commit whose ${p.gate} settled.`,
  }),
  protection_run_over: code<{
    run: string;
    status: string;
    repo: string;
    environment: string;
    commit: string;
    sha: string;
  }>({
    status: 409,
    message: (p) =>
      `Deployment run ${p.run} at ${p.commit} is ${p.status}: a run that failed or was superseded approves nothing, so ${p.environment} may not deploy it.`,
    recovery: (p) =>
      `Deliver that commit through a new run: \`yoke deployment-runs create ${p.repo} --commit ${p.sha}\`, then \`yoke watch deploy -- RUN-ID\`.`,
  }),
  protection_not_settled: code<{
    run: string;
    environment: string;
    commit: string;
    gate: string;
    wait: string;
    command: string;
  }>({
    status: 409,
    message: (p) =>
      `Deployment run ${p.run} has not settled ${p.gate} at ${p.commit}, so ${p.environment} may not deploy it yet: ${p.wait}.`,
    recovery: (p) =>
      p.command.startsWith('yoke watch deploy')
        ? `Run \`${p.command}\`: once ${p.gate} settles, it deploys ${p.environment} itself.`
        : `\`${p.command}\`, then \`yoke watch deploy -- ${p.run}\` deploys ${p.environment} once ${p.gate} settles.`,
  }),
  protection_member_removed: code<{
    repo: string;
    run: string;
    environment: string;
    commit: string;
    issue: number;
    by: string;
    gate: string;
  }>({
    status: 409,
    message: (p) =>
      `#${p.issue} left deployment run ${p.run} (removed by ${p.by}) after ${p.gate} settled at ${p.commit}: what QA accepted is not what ${p.environment} would get.`,
    recovery: (p) =>
      `Deliver a later commit: \`yoke deployment-runs create ${p.repo} --commit LATER_SHA --supersedes ${p.run}\`.`,
  }),
  protection_read_failed: code<{ repo: string; environment: string; detail: string }>({
    status: 503,
    message: (p) =>
      `yoke could not read what it needs to answer a deployment to ${p.environment} of ${p.repo}: ${p.detail}`,
    recovery: () => 'Nothing to do: the job waits, and yoke decides and answers it again on its next sweep.',
  }),
  protection_delivery_refused: code<{ repo: string; environment: string; detail: string; fix: string }>({
    status: 409,
    message: (p) =>
      `yoke cannot read the delivery settings of ${p.repo}, so it approves nothing to ${p.environment}: ${p.detail}`,
    recovery: (p) => p.fix,
  }),
  environment_protected: code<{ repo: string; stage: string; environment: string }>({
    status: 200,
    message: (p) => `${p.environment} of ${p.repo} (stage ${p.stage}) holds every job for yoke's rule.`,
    recovery: () => 'Nothing to do.',
  }),
  environment_missing: code<{ repo: string; stage: string; environment: string; app: string }>({
    status: 409,
    message: (p) =>
      `${p.repo} has no environment ${p.environment} (stage ${p.stage}): GitHub makes one on the first deploy, with no protection rule, so the QA gate before it is advisory only.`,
    recovery: (p) =>
      `Create it and enable yoke's rule: Settings, Environments, New environment \`${p.environment}\`, then under Deployment protection rules tick \`${p.app}\`.`,
  }),
  environment_rule_missing: code<{ repo: string; stage: string; environment: string; app: string }>({
    status: 409,
    message: (p) =>
      `Environment ${p.environment} of ${p.repo} (stage ${p.stage}) does not have yoke's protection rule: anyone who can run its deploy can ship a commit whose QA never settled.`,
    recovery: (p) =>
      `Enable it: Settings, Environments, \`${p.environment}\`, Deployment protection rules, tick \`${p.app}\`, Save protection rules.`,
  }),
};
