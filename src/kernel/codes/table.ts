// The one place that maps a refusal code to its HTTP status, its message and
// the command that recovers. Replies, API errors, notices and the fleet report
// all read it. Each code declares the placeholders its texts need, so a caller
// that forgets one does not compile.

import { keysOf } from '../guards.js';
import { code, type CodeDef } from './define.js';
import { DELIVERY_CODES } from './delivery.js';
import { DISPATCH_CODES } from './dispatch.js';
import { MONEY_CODES } from './money.js';
import { PROTECTION_CODES } from './protection.js';
import { WHY_NOT_CODES } from './why-not.js';

export const CODE_INFO = {
  unauthorized: code({
    status: 401,
    message: () => 'This request carries no valid bearer token.',
    recovery: () => 'Send `Authorization: Bearer <token>` with a token listed in YOKE_API_TOKENS.',
  }),
  permission_required: code<{ what: string; repo: string; login: string; permission: string; need: string }>({
    status: 403,
    message: (p) =>
      `${p.what} on ${p.repo} needs ${p.need} access or more; GitHub says ${p.login}'s is ${p.permission}.`,
    recovery: (p) =>
      `Ask someone with ${p.need} access to ${p.repo} to do it with their own token, or ask an admin of ${p.repo} to give ${p.login} ${p.need} access.`,
  }),
  operator_token_required: code<{ what: string }>({
    status: 403,
    message: (p) => `${p.what} is for yoke's operators, and this request carries a person token.`,
    recovery: () =>
      "Send it with an operator token from YOKE_API_TOKENS; a person token reaches one repository's routes (`yoke repo status OWNER/REPO`, `yoke runs list --repo OWNER/REPO`).",
  }),
  not_found: code({
    status: 404,
    message: () => 'There is no such route.',
    recovery: () => "See docs/http-api.md in yoke's repository for the routes yoke serves.",
  }),
  answer_unreadable: code<{ what: string; detail: string }>({
    status: 502,
    message: (p) => `yoke's answer to ${p.what} is not one this CLI reads: ${p.detail}.`,
    recovery: () =>
      'Run a yoke CLI from the same release as the server (the CLI and the server share one route table); if they match, report this message.',
  }),
  validation_failed: code<{ detail: string }>({
    status: 400,
    message: (p) => `The request body is not valid: ${p.detail}`,
    recovery: () => 'Fix the fields named above and send the request again.',
  }),
  body_too_large: code<{ limit: number }>({
    status: 413,
    message: (p) => `The request body is larger than ${p.limit} bytes.`,
    recovery: () => 'Send a smaller body; summaries longer than the limit should be cut.',
  }),
  repo_not_installed: code<{ repo: string }>({
    status: 404,
    message: (p) => `yoke's GitHub App is not installed on ${p.repo}, so yoke cannot see it.`,
    recovery: (p) =>
      `Install the app on ${p.repo} (the app's page on GitHub, Install App, then pick the repository), and run \`yoke doctor ${p.repo}\` to check the rest.`,
  }),
  repo_not_opted_in: code<{ repo: string }>({
    status: 409,
    message: (p) => `${p.repo} has not opted in to yoke.`,
    recovery: (p) =>
      `Add \`.github/yoke.yml\` to the default branch of ${p.repo} (\`yoke init --agent claude-code\` writes one; docs/configuration.md lists its fields).`,
  }),
  repo_disabled: code<{ repo: string; detail: string }>({
    status: 409,
    message: (p) => `${p.repo} is disabled: ${p.detail}`,
    recovery: (p) => `Fix \`.github/yoke.yml\` on the default branch of ${p.repo}; yoke re-reads it on its next pass.`,
  }),
  repo_paused: code<{ repo: string; threshold: number }>({
    status: 409,
    message: (p) =>
      `${p.repo} is paused: it reached ${p.threshold} consecutive AFK failures, and only a reset lifts the pause.`,
    recovery: (p) => `Comment \`/yoke reset\` on any issue of ${p.repo}, or run \`yoke repo reset ${p.repo}\`.`,
  }),
  subject_busy: code<{ repo: string; subject: string; run: string }>({
    status: 409,
    message: (p) => `${p.subject} in ${p.repo} already has a live run (${p.run}).`,
    recovery: (p) => `Wait for run ${p.run} to end, or see \`yoke fleet report\`.`,
  }),
  issue_not_found: code<{ repo: string; number: number }>({
    status: 404,
    message: (p) => `Issue #${p.number} is not an open issue of ${p.repo}.`,
    recovery: (p) => `Name an open issue (not a pull request) of ${p.repo}.`,
  }),
  pull_not_found: code<{ repo: string; number: number }>({
    status: 404,
    message: (p) => `#${p.number} is not an open pull request of ${p.repo}.`,
    recovery: () => 'Comment `/yoke land` on an open claim PR.',
  }),
  pull_not_claim: code<{ repo: string; number: number }>({
    status: 409,
    message: (p) => `#${p.number} is not a claim PR of ${p.repo}, so yoke does not land it.`,
    recovery: () =>
      'A claim PR comes from a branch of this repository, closes its issue, and ends its body with the `Yoke-Run: <run id>` trailer of the AFK run that made it; yoke records it on its next pass. Land other PRs by hand.',
  }),
  run_unknown: code<{ run: string }>({
    status: 404,
    message: (p) => `There is no run ${p.run}.`,
    recovery: () => 'Report with the run id yoke gave the run (YOKE_RUN_ID or the run_id input).',
  }),
  run_not_found: code<{ run: string }>({
    status: 404,
    message: (p) => `There is no run ${p.run}.`,
    recovery: () => '`yoke runs list` shows the runs yoke knows, newest first, with their ids.',
  }),
  run_secret_invalid: code<{ run: string }>({
    status: 401,
    message: (p) => `The secret does not match run ${p.run}.`,
    recovery: () => 'Send `Authorization: Bearer $YOKE_RUN_SECRET` exactly as yoke gave it to the run.',
  }),
  run_token_invalid: code<{ detail: string; audience: string }>({
    status: 401,
    message: (p) => `The OIDC token was refused: ${p.detail}`,
    recovery: (p) =>
      `Request the token with audience ${p.audience} (\`core.getIDToken\`), from the workflow run yoke dispatched.`,
  }),
  run_reaches_through_github: code<{ run: string }>({
    status: 403,
    message: (p) =>
      `This yoke takes runs' results back through GitHub only (YOKE_RUNS_REACH=github), so run ${p.run} is heard from its workflow run's result artifact, never through this API.`,
    recovery: () =>
      "Let the run's workflow hand its result back as its artifact (the shipped workflows do with `reach: github`); an operator who wants runs to call yoke sets YOKE_RUNS_REACH=api.",
  }),
  run_already_reported: code<{ run: string }>({
    status: 409,
    message: (p) => `Run ${p.run} has already reported its result.`,
    recovery: () => 'Nothing to do: yoke keeps the first report.',
  }),
  run_not_live: code<{ run: string; outcome: string }>({
    status: 409,
    message: (p) => `Run ${p.run} has already ended (${p.outcome}).`,
    recovery: () => 'Nothing to do: an ended run cannot report.',
  }),
  run_cannot_push: code<{ run: string; kind: string; detail: string }>({
    status: 409,
    message: (p) => `Run ${p.run} (${p.kind}) cannot push: ${p.detail}.`,
    recovery: () => 'Nothing to do for this run; a later run of the work gets its own branch.',
  }),
  claim_open_failed: code<{ run: string; detail: string }>({
    status: 502,
    message: (p) => `yoke could not open the claim PR for run ${p.run}: ${p.detail}.`,
    recovery: () =>
      'Report again in a moment; if GitHub keeps refusing, check that the branch was pushed and that no PR is open for it.',
  }),
  report_head_mismatch: code<{ run: string; judged: string; head: string }>({
    status: 409,
    message: (p) => `Run ${p.run} was launched to validate ${p.head}, but its report judged ${p.judged}.`,
    recovery: () =>
      'Nothing to do: yoke records no verdict for a head it did not dispatch the lander on; the lander reports `head_sha` as its dispatch input gave it.',
  }),
  verdict_required: code({
    status: 400,
    message: () => 'A lander that succeeds must report a verdict (accept or reject).',
    recovery: () => 'Send `{"outcome":"success","verdict":"accept"|"reject","summary":"..."}`.',
  }),
  command_unknown: code<{ command: string; suggestion: string | null }>({
    status: 400,
    message: (p) =>
      `\`${p.command}\` is not a yoke command.${p.suggestion ? ` Did you mean \`${p.suggestion}\`?` : ''}`,
    recovery: () =>
      'Use one of: /yoke start, /yoke start <instructions>, /yoke fix <what to change>, /yoke land, /yoke auto on, /yoke auto off, /yoke reset, /yoke status, /yoke qa attach <plan>, /yoke qa decline, /yoke qa waive <case> [--plan PLAN] --reason "why".',
  }),
  fix_text_missing: code<{ number: number }>({
    status: 400,
    message: (p) => `\`/yoke fix\` on #${p.number} says nothing to change.`,
    recovery: (p) =>
      `Say what the agent should change after the command, on the same line or the lines below: \`/yoke fix rename count to total\`. To validate #${p.number} again as it is, comment \`/yoke land\`.`,
  }),
  fix_not_on_claim: code<{ repo: string; number: number }>({
    status: 409,
    message: (p) => `#${p.number} is not a claim PR of ${p.repo}, so no agent works on it.`,
    recovery: (p) =>
      `\`/yoke fix\` works on the PRs yoke's agents opened (labelled \`yoke:claim\`). To have an agent work on an issue, comment \`/yoke start <instructions>\` on it; change #${p.number} by hand.`,
  }),
  command_forbidden: code<{ repo: string; permission: string }>({
    status: 403,
    message: (p) => `yoke commands need write access to ${p.repo}; yours is ${p.permission}.`,
    recovery: () => 'Ask a maintainer with write access to comment the command.',
  }),
  comment_too_large: code<{ limit: number }>({
    status: 413,
    message: (p) => `The comment is longer than ${p.limit} characters, so yoke did not read it as a command.`,
    recovery: () => 'Post the command alone in a new comment.',
  }),
  command_failed: code<{ command: string; attempts: number; detail: string }>({
    status: 500,
    message: (p) => `yoke could not complete \`${p.command}\` after ${p.attempts} attempts: ${p.detail}`,
    recovery: () => 'Post the command again in a new comment; if it fails again, the yoke log has the cause.',
  }),
  merge_refused: code<{ number: number; sha: string; detail: string }>({
    status: 409,
    message: (p) => `GitHub refused to merge #${p.number} at ${p.sha}: ${p.detail}`,
    recovery: (p) => `Resolve the refusal, then comment \`/yoke land\` on #${p.number} for a fresh lander.`,
  }),
  enqueue_refused: code<{ number: number; branch: string; detail: string }>({
    status: 409,
    message: (p) =>
      `GitHub would not add #${p.number} to the merge queue on ${p.branch}, which a ruleset requires (yoke never merges around it): ${p.detail}`,
    recovery: (p) =>
      `Grant yoke's app the Merge queues permission (read and write) if the message says it lacks it, then comment \`/yoke land\` on #${p.number}; or add #${p.number} to the merge queue yourself: yoke's lander validates the merge group GitHub builds either way.`,
  }),
  fast_forward_refused: code<{ number: number; sha: string; branch: string; detail: string }>({
    status: 409,
    message: (p) =>
      `GitHub refused to move ${p.branch} to ${p.sha}, the commit the lander validated for #${p.number}: ${p.detail}`,
    recovery: (p) =>
      `Let yoke's app bypass the rules that protect ${p.branch} (the ruleset's bypass list, docs/landing.md), then comment \`/yoke land\` on #${p.number}; or set autoland.fast_forward: false in .github/yoke.yml to merge through the pull request instead.`,
  }),
  land_commit_forged: code<{ number: number; sha: string; problem: string }>({
    status: 409,
    message: (p) =>
      `The commit the lander judged for #${p.number}, ${p.sha}, is not the tree yoke pinned (the base with the heads merged on in order): ${p.problem}. Someone with push access moved yoke/land/${p.number} while yoke built it, so its verdict counts for nothing.`,
    recovery: (p) =>
      `Nothing to do for #${p.number}: yoke validates it again on a commit it builds anew. Find who pushed to yoke/land/${p.number} (the repository's audit log), and restrict pushes to yoke/land/* to yoke's app with a ruleset (docs/landing.md).`,
  }),
  protected_paths_changed: code<{ number: number; sha: string; files: string }>({
    status: 409,
    message: (p) =>
      `#${p.number} changes files yoke trusts (${p.files}), so the lander's accept at ${p.sha} does not merge it: a person must approve this head.`,
    recovery: (p) =>
      `Review the change to those files; if it is right, approve #${p.number} at ${p.sha} as a writer who is not its author (Files changed → Review changes → Approve), and yoke merges it at that head. If not, close it or push a change that leaves them alone.`,
  }),
  fix_attempts_exhausted: code<{ number: number; attempts: number }>({
    status: 409,
    message: (p) => `#${p.number} was rejected again after ${p.attempts} fix runs.`,
    recovery: (p) => `Repair the PR by hand, then comment \`/yoke land\` on #${p.number}.`,
  }),
  installation_auth_failed: code<{ installation: number; detail: string }>({
    status: 502,
    message: (p) => `Installation ${p.installation} could not authenticate: ${p.detail}`,
    recovery: () => 'Check the app is still installed and its private key is current (APP_ID, PRIVATE_KEY).',
  }),
  ...DELIVERY_CODES,
  ...DISPATCH_CODES,
  ...MONEY_CODES,
  ...PROTECTION_CODES,
  ...WHY_NOT_CODES,
} as const;

export type Code = keyof typeof CODE_INFO;
export const CODES = keysOf(CODE_INFO);

/** The placeholders a code's texts need. */
export type CodeParams<C extends Code> = Parameters<(typeof CODE_INFO)[C]['message']>[0];

type ParamArgs<C extends Code> =
  Record<never, never> extends CodeParams<C> ? [params?: CodeParams<C>] : [params: CodeParams<C>];

export interface Refusal {
  code: Code;
  status: number;
  message: string;
  recovery: string;
}

export function makeRefusal<C extends Code>(code: C, ...[params]: ParamArgs<C>): Refusal & { code: C } {
  const info = CODE_INFO[code] as CodeDef<CodeParams<C>>;
  const p = (params ?? {}) as CodeParams<C>;
  return { code, status: info.status, message: info.message(p), recovery: info.recovery(p) };
}
