import { code } from './define.js';

// The delivery half's codes: deployment runs, QA, notices, close-out (a dispatch's and contention's:
// dispatch.ts). Part of the one table in codes/table.ts.

/** A run's status as a sentence says it: "has succeeded", "was superseded". */
const endedAs = (status: string): string =>
  status === 'succeeded' || status === 'failed'
    ? `has ${status}`
    : status === 'superseded'
      ? 'was superseded'
      : `is ${status}`;

export const DELIVERY_CODES = {
  qa_configuration_refused: code<{ repo: string; file: string; field: string; detail: string; then: string }>({
    status: 422,
    message: (p) => `QA configuration of ${p.repo} is refused: ${p.detail}`,
    recovery: (p) => `Fix \`${p.field}\` in \`${p.file}\` of ${p.repo}; ${p.then}`,
  }),
  qa_plan_invalid: code<{ ref: string; path: string; field: string; detail: string }>({
    status: 422,
    message: (p) => `QA plan ${p.ref} (${p.path}) is there, but yoke refuses it: ${p.detail}`,
    recovery: (p) =>
      `Fix \`${p.field}\` in \`${p.path}\` (\`yoke config check\` shows what yoke would say before you push), merge it, then attach it again.`,
  }),
  qa_plan_ambiguous: code<{ ref: string; ids: string[] }>({
    status: 409,
    message: (p) => `The plan name "${p.ref}" matches ${p.ids.length} plans: ${p.ids.join(', ')}.`,
    recovery: (p) => `Select one by its exact id, e.g. \`${p.ids[0]}\`.`,
  }),
  qa_plan_unknown: code<{ ref: string; known: string[]; where: string }>({
    status: 404,
    message: (p) => `No QA plan is called "${p.ref}" in ${p.where}.`,
    recovery: (p) =>
      p.known.length
        ? `Name one of: ${p.known.join(', ')}.`
        : `Add a plan file to the plans folder (docs/configuration.md, QA plans), then name its id.`,
  }),
  plan_group_not_open: code<{ run: string; stage: string; plan: string; closed: string[] }>({
    status: 409,
    message: (p) =>
      `Run ${p.run} has no open group of plan ${p.plan} at stage ${p.stage}${p.closed.length ? `; its closed groups: ${p.closed.join(', ')}` : ''}.`,
    recovery: (p) =>
      `Nothing of ${p.plan} is left to run at ${p.stage}; see \`yoke deployment-runs get ${p.run}\` for what the stage waits on.`,
  }),
  qa_plan_not_member_owned: code<{ run: string; stage: string; item: string; plan: string }>({
    status: 409,
    message: (p) =>
      `Plan ${p.plan} is not ${p.item}'s own QA in run ${p.run}: it is shared, so the run's driver runs it.`,
    recovery: (p) =>
      `Run it as the driver: \`yoke qa plan run --deployment-run-id ${p.run} --stage ${p.stage} --plan ${p.plan}\`.`,
  }),
  qa_replacement_undeclared: code<{ plan: string; case: string; replaces: string; waive: string }>({
    status: 403,
    message: (p) =>
      `Plan ${p.plan} at the run's pinned commit does not declare ${p.case} as the replacement of ${p.replaces}, so its verdict cannot take ${p.replaces}'s place.`,
    recovery: (p) =>
      `Declare it in the plan (\`replaces: ${p.replaces}\` on case ${p.case}), merge, and take the run over on that commit; or have a maintainer discharge ${p.replaces} with a reason: \`${p.waive}\`.`,
  }),
  qa_case_unknown: code<{ plan: string; case: string; cases: string[] }>({
    status: 404,
    message: (p) => `Plan ${p.plan} has no case ${p.case} at the run's pinned commit.`,
    recovery: (p) => `Name one of its cases: ${p.cases.join(', ')}.`,
  }),
  qa_evidence_required: code<{ case: string; command: string }>({
    status: 400,
    message: (p) => `Case ${p.case} requires evidence with its verdict.`,
    recovery: (p) => `Record it again with evidence: \`${p.command}\`.`,
  }),
  delivery_not_configured: code<{ repo: string }>({
    status: 409,
    message: (p) =>
      `${p.repo} has no \`delivery:\` section in \`.github/yoke.yml\`, so it has no stages to deploy through.`,
    recovery: () =>
      'Add `delivery: {stages: [...]}` to `.github/yoke.yml` on the default branch (docs/configuration.md), or let `yoke init --delivery` add it.',
  }),
  deployment_run_unknown: code<{ run: string }>({
    status: 404,
    message: (p) => `There is no deployment run ${p.run}.`,
    recovery: () => 'Name a run yoke created (its tracking issue and `yoke deployment-runs create` print its id).',
  }),
  deployment_run_not_active: code<{ run: string; status: string }>({
    status: 409,
    message: (p) => `Deployment run ${p.run} ${endedAs(p.status)}; only an active run moves.`,
    recovery: (p) =>
      `See \`yoke deployment-runs get ${p.run}\`; start a new run with \`yoke deployment-runs create\` if work is left.`,
  }),
  deployment_run_active: code<{ repo: string; run: string }>({
    status: 409,
    message: (p) => `${p.repo} already has an active deployment run, ${p.run}.`,
    recovery: (p) =>
      `Finish it (\`yoke deployment-runs get ${p.run}\`), or take it over on a later commit with \`--supersedes ${p.run}\`.`,
  }),
  deployment_commit_unknown: code<{ repo: string; commit: string }>({
    status: 404,
    message: (p) => `${p.repo} has no commit ${p.commit}.`,
    recovery: (p) => `Name a commit of ${p.repo}'s default branch, or leave out --commit to take its head.`,
  }),
  qa_stage_empty: code<{ repo: string; stage: string }>({
    status: 409,
    message: (p) =>
      `Stage ${p.stage} of ${p.repo} has nothing to check: no member has a QA plan and no run-level plan applies, so it does not settle.`,
    recovery: (p) =>
      `Attach a plan to a member (label \`qa:PLAN\` or \`/yoke qa attach PLAN\`), list one in \`delivery.run_plans\`, or say \`allow_empty: true\` on stage ${p.stage} in \`.github/yoke.yml\` if it may pass with nothing checked.`,
  }),
  deployment_commit_off_branch: code<{ repo: string; commit: string; branches: string }>({
    status: 409,
    message: (p) =>
      `${p.commit} is not on ${p.repo}'s ${p.branches}: a deployment run's QA plans are read at its pinned commit, so it must be one the repository's maintainers merged.`,
    recovery: (p) =>
      `Merge it first, then deliver it: \`yoke deployment-runs create ${p.repo} --commit SHA\` with a commit of the default branch (or add its branch to \`delivery.release_branches\`).`,
  }),
  deployment_branch_unprotected: code<{ repo: string; commit: string; branch: string }>({
    status: 409,
    message: (p) =>
      `${p.commit} is on ${p.repo}'s release branch ${p.branch}, but GitHub does not protect that branch: whoever can push to it could rewrite the QA plans a deployment run reads at its pinned commit.`,
    recovery: (p) =>
      `Protect ${p.branch} on GitHub (a branch protection rule or a ruleset that restricts who may push), then run \`yoke deployment-runs create ${p.repo} --commit ${p.commit}\` again; or deliver a commit of the default branch.`,
  }),
  deployment_item_refused: code<{ repo: string; item: string; detail: string }>({
    status: 409,
    message: (p) => `${p.item} cannot join a deployment run of ${p.repo}: ${p.detail}`,
    recovery: () =>
      "Leave it out of --items; an item joins once its claim PR merged at or before the run's commit and its delivery is owed.",
  }),
  deployment_no_members: code<{ repo: string; commit: string }>({
    status: 409,
    message: (p) => `No item of ${p.repo} is owed delivery with its claim PR merged at or before ${p.commit}.`,
    recovery: () => 'Merge a claim PR first, or name a later commit with --commit.',
  }),
  deployment_supersedes_refused: code<{ run: string; detail: string }>({
    status: 409,
    message: (p) => `The new run cannot take over ${p.run}: ${p.detail}`,
    recovery: (p) =>
      `Name an active run of the same repository and a commit later than its pinned one: \`yoke deployment-runs create REPO --commit LATER_SHA --supersedes ${p.run}\`.`,
  }),
  deployment_stage_unknown: code<{ run: string; stage: string; stages: string[] }>({
    status: 404,
    message: (p) => `Deployment run ${p.run} has no stage ${p.stage}.`,
    recovery: (p) => `Name one of its stages: ${p.stages.join(', ')}.`,
  }),
  deployment_stage_not_current: code<{ run: string; stage: string; current: string; kind: string }>({
    status: 409,
    message: (p) => `Stage ${p.stage} of run ${p.run} is not where the run is: it is at ${p.current}.`,
    recovery: (p) => `Work on ${p.current} first; \`yoke deployment-runs get ${p.run}\` shows what it waits on.`,
  }),
  deployment_item_unknown: code<{ run: string; item: string; members: string[] }>({
    status: 404,
    message: (p) => `${p.item} is not a member of deployment run ${p.run}.`,
    recovery: (p) =>
      p.members.length ? `Name one of its members: ${p.members.join(', ')}.` : 'The run has no members left.',
  }),
  closeout_refused: code<{ item: string; issue: number; detail: string; fix: string }>({
    status: 409,
    message: (p) => `${p.item} was accepted but could not be closed out: ${p.detail}`,
    recovery: (p) => `${p.fix} yoke tries #${p.issue}'s close-out again by itself once that is settled.`,
  }),
  qa_checkin_busy: code<{ run: string; holder: string; seconds: number }>({
    status: 409,
    message: (p) => `Deployment run ${p.run} is driven by ${p.holder}, whose lease runs ${p.seconds} s more.`,
    recovery: (p) => `Let ${p.holder} finish, or resume once its lease lapses: \`yoke watch deploy -- ${p.run}\`.`,
  }),
  qa_wait_unattended: code<{
    run: string;
    stage: string;
    subject: string;
    detail: string;
    notice: string;
    command: string;
  }>({
    status: 409,
    message: (p) =>
      `Deployment run ${p.run} waits at ${p.stage} for ${p.subject} (${p.detail}) with no live driver, and its notice is ${p.notice}.`,
    recovery: (p) =>
      `Resume the driver with \`yoke watch deploy -- ${p.run}\`, or move the wait yourself: \`${p.command}\`.`,
  }),
  qa_wait_no_person: code<{
    run: string;
    stage: string;
    subject: string;
    detail: string;
    bots: string;
    command: string;
  }>({
    status: 409,
    message: (p) =>
      `Deployment run ${p.run} waits at ${p.stage} for ${p.subject} (${p.detail}) and nobody is told: ${p.bots ? `its only recipient, ${p.bots}, is a bot` : 'it has no recipient'}, no driver is live, and the opt-in file names no steering.`,
    recovery: (p) =>
      `Name a person or team as \`steering:\` under \`delivery:\` in .github/yoke.yml so the wait reaches someone, resume the driver with \`yoke watch deploy -- ${p.run}\`, or move the wait yourself: \`${p.command}\`.`,
  }),
  qa_notice_unknown: code<{ thread: number }>({
    status: 404,
    message: (p) => `No open QA notice of yoke's is on #${p.thread}.`,
    recovery: () => 'Comment `/yoke qa decline` on the PR or issue that carries the notice.',
  }),
  item_ref_invalid: code<{ ref: string; example: string }>({
    status: 400,
    message: (p) => `"${p.ref}" is not an item.`,
    recovery: (p) => `Name an item as PREFIX-N with the repository's prefix, e.g. ${p.example}.`,
  }),
  qa_waive_forbidden: code<{ repo: string; permission: string }>({
    status: 403,
    message: (p) => `Waiving a QA case of ${p.repo} needs maintain or admin access; yours is ${p.permission}.`,
    recovery: () => 'Ask a maintainer to waive it, or retry the case.',
  }),
  maintain_required: code<{ action: string; repo: string; login: string; permission: string; comment: string | null }>({
    status: 403,
    message: (p) => `${p.action} on ${p.repo} needs maintain or admin access; ${p.login}'s is ${p.permission}.`,
    recovery: (p) =>
      `Ask a maintainer of ${p.repo} to do it with their own token (YOKE_PERSON_TOKENS)${p.comment ? `, or to comment \`${p.comment}\` on the deployment run's tracking issue` : ''}.`,
  }),
  person_token_required: code<{ action: string; repo: string; comment: string | null }>({
    status: 403,
    message: (p) =>
      `${p.action} on ${p.repo} is a person's decision, and this request carries an operator token, which names nobody.`,
    recovery: (p) =>
      `Run the same command with your own token from YOKE_PERSON_TOKENS (login:token) as YOKE_TOKEN${p.comment ? `, or comment \`${p.comment}\` on the deployment run's tracking issue` : ''}.`,
  }),
  qa_approval_forbidden: code<{ repo: string; login: string; permission: string; case: string }>({
    status: 403,
    message: (p) =>
      `Case ${p.case} is manual: its verdict is an approval, which needs write access to ${p.repo} or more; ${p.login}'s is ${p.permission}.`,
    recovery: (p) => `Ask someone with write access to ${p.repo} to record it with their own token.`,
  }),
  identity_not_yours: code<{ named: string; allowed: string }>({
    status: 403,
    message: (p) =>
      `This token may not record as ${p.named}: who recorded a verdict comes from the token, not the request.`,
    recovery: (p) => `Leave \`by\` out (it records as ${p.allowed}), or send the request with ${p.named}'s own token.`,
  }),
  run_not_holder: code<{ run: string; item: string; holder: string }>({
    status: 403,
    message: (p) =>
      `Run ${p.run} does not hold ${p.item} (${p.holder} does); a run's credential records QA only for the item it holds.`,
    recovery: (p) => `Have ${p.holder} record it, or the run's driver with an operator token.`,
  }),
  identity_field_not_yours: code<{ field: string; named: string; allowed: string }>({
    status: 403,
    message: (p) =>
      `This token may not name ${p.named} as the ${p.field}: who that is comes from the token, not the request.`,
    recovery: (p) => `Leave \`${p.field}\` out (it is ${p.allowed}), or send the request with ${p.named}'s own token.`,
  }),
  run_role_forbidden: code<{ run: string }>({
    status: 403,
    message: (p) => `Run ${p.run}'s credential may read and record the QA of the item it holds, nothing else.`,
    recovery: () =>
      'Send this request with an operator token (YOKE_API_TOKENS) or a person token (YOKE_PERSON_TOKENS).',
  }),
  deploy_stage_is_workflow: code<{ run: string; stage: string; workflow: string }>({
    status: 409,
    message: (p) =>
      `Stage ${p.stage} of run ${p.run} runs on GitHub Actions (${p.workflow}): its outcome is read from the workflow run, never reported.`,
    recovery: (p) => `Follow it with \`yoke watch deploy -- ${p.run}\`.`,
  }),
  deploy_stage_not_started: code<{ run: string; stage: string }>({
    status: 409,
    message: (p) => `Stage ${p.stage} of run ${p.run} has no deployment to follow: it was never started.`,
    recovery: (p) => `Start it: \`yoke watch deploy -- ${p.run}\`.`,
  }),
  deploy_stage_failed: code<{ run: string; stage: string; detail: string }>({
    status: 500,
    message: (p) => `Deploy stage ${p.stage} of run ${p.run} failed: ${p.detail}`,
    recovery: (p) =>
      `Fix it, then resume: \`yoke watch deploy -- ${p.run}\` (or \`yoke deploy stage run ${p.run} ${p.stage}\`).`,
  }),
  qa_stage_failed: code<{ run: string; plan: string; commit: string; items: string; commands: string }>({
    status: 409,
    message: (p) => `Shared plan ${p.plan} failed at ${p.commit}; triage which of ${p.items} need code fixes.`,
    recovery: (p) => `${p.commands}\nThen resume: \`yoke watch deploy -- ${p.run}\`.`,
  }),
  fresh_refused: code<{ run: string }>({
    status: 400,
    message: (p) => `--fresh does not recover run ${p.run}: a fresh start would lose track of what it did.`,
    recovery: (p) => `Read \`yoke deployment-runs get ${p.run}\` and resume it with \`yoke watch deploy -- ${p.run}\`.`,
  }),
  transport_switch_refused: code<{ run: string }>({
    status: 409,
    message: (p) =>
      `Run ${p.run} is driven over HTTPS; the database door does not take it over, so an HTTPS timeout is never recovered through it.`,
    recovery: (p) =>
      `Resume it over HTTPS: \`yoke watch deploy -- ${p.run}\` with YOKE_URL set; read \`yoke deployment-runs get ${p.run}\` first.`,
  }),
} as const;
