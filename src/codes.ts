// The one place that maps a refusal code to its HTTP status, its message and
// the command that recovers. Replies, API errors and notices all read it.

export const CODES = [
  'unauthorized',
  'forbidden',
  'not_found',
  'validation_failed',
  'body_too_large',
  'repo_not_opted_in',
  'repo_disabled',
  'repo_paused',
  'subject_busy',
  'issue_not_found',
  'pull_not_found',
  'run_unknown',
  'run_secret_invalid',
  'run_token_invalid',
  'run_already_reported',
  'run_not_live',
  'verdict_required',
  'command_unknown',
  'command_forbidden',
  'comment_too_large',
  'merge_refused',
  'fix_attempts_exhausted',
  'launch_failed',
  'installation_auth_failed',
] as const;

export type Code = (typeof CODES)[number];

export interface CodeInfo {
  status: number;
  message: string;
  /** Recovery, with {placeholders} filled from the refusal's context. */
  recovery: string;
}

export const CODE_INFO: Record<Code, CodeInfo> = {
  unauthorized: {
    status: 401,
    message: 'This request carries no valid bearer token.',
    recovery: 'Send `Authorization: Bearer <token>` with a token listed in YOKE_API_TOKENS.',
  },
  forbidden: {
    status: 403,
    message: 'This token may not do that.',
    recovery: 'Use an operator token from YOKE_API_TOKENS.',
  },
  not_found: {
    status: 404,
    message: 'There is no such route.',
    recovery: 'See the HTTP API section of the README for the routes yoke serves.',
  },
  validation_failed: {
    status: 400,
    message: 'The request body is not valid: {detail}',
    recovery: 'Fix the fields named above and send the request again.',
  },
  body_too_large: {
    status: 413,
    message: 'The request body is larger than {limit} bytes.',
    recovery: 'Send a smaller body; summaries longer than the limit should be cut.',
  },
  repo_not_opted_in: {
    status: 409,
    message: '{repo} has not opted in to yoke.',
    recovery: 'Add `.github/yoke.yml` to the default branch of {repo} (see the README for its fields).',
  },
  repo_disabled: {
    status: 409,
    message: '{repo} is disabled: {detail}',
    recovery: 'Fix `.github/yoke.yml` in {repo}; yoke re-reads it on its next pass.',
  },
  repo_paused: {
    status: 409,
    message: '{repo} is paused: it reached {threshold} consecutive AFK failures, and only a reset lifts the pause.',
    recovery: 'Comment `/yoke reset` on any issue of {repo}, or `POST /yoke/api/repos/{repo}/reset`.',
  },
  subject_busy: {
    status: 409,
    message: '{subject} in {repo} already has a live run ({run}).',
    recovery: 'Wait for run {run} to end, or see `yoke fleet report`.',
  },
  issue_not_found: {
    status: 404,
    message: 'Issue #{number} is not an open issue of {repo}.',
    recovery: 'Name an open issue (not a pull request) of {repo}.',
  },
  pull_not_found: {
    status: 404,
    message: '#{number} is not an open pull request of {repo}.',
    recovery: 'Comment `/yoke land` on an open claim PR.',
  },
  run_unknown: {
    status: 404,
    message: 'There is no run {run}.',
    recovery: 'Report with the run id yoke gave the run (YOKE_RUN_ID or the run_id input).',
  },
  run_secret_invalid: {
    status: 401,
    message: 'The secret does not match run {run}.',
    recovery: 'Send `Authorization: Bearer $YOKE_RUN_SECRET` exactly as yoke gave it to the run.',
  },
  run_token_invalid: {
    status: 401,
    message: 'The OIDC token was refused: {detail}',
    recovery: 'Request the token with audience {audience} (`core.getIDToken`), from the workflow run yoke dispatched.',
  },
  run_already_reported: {
    status: 409,
    message: 'Run {run} has already reported its result.',
    recovery: 'Nothing to do: yoke keeps the first report.',
  },
  run_not_live: {
    status: 409,
    message: 'Run {run} has already ended ({outcome}).',
    recovery: 'Nothing to do: an ended run cannot report.',
  },
  verdict_required: {
    status: 400,
    message: 'A lander that succeeds must report a verdict (accept or reject).',
    recovery: 'Send `{"outcome":"success","verdict":"accept"|"reject","summary":"..."}`.',
  },
  command_unknown: {
    status: 400,
    message: '`{command}` is not a yoke command.',
    recovery: 'Use one of: /yoke start, /yoke land, /yoke auto on, /yoke auto off, /yoke reset, /yoke status.',
  },
  command_forbidden: {
    status: 403,
    message: '@{user} does not have write access to {repo}.',
    recovery: 'Ask a maintainer with write access to comment the command.',
  },
  comment_too_large: {
    status: 413,
    message: 'The comment is longer than {limit} characters, so yoke did not read it as a command.',
    recovery: 'Post the command alone in a new comment.',
  },
  merge_refused: {
    status: 409,
    message: 'GitHub refused to merge #{number} at {sha}: {detail}',
    recovery: 'Resolve the refusal, then comment `/yoke land` on #{number} for a fresh lander.',
  },
  fix_attempts_exhausted: {
    status: 409,
    message: '#{number} was rejected again after {attempts} fix runs.',
    recovery: 'Repair the PR by hand, then comment `/yoke land` on #{number}.',
  },
  launch_failed: {
    status: 502,
    message: 'The {launcher} launcher could not start run {run}: {detail}',
    recovery: 'Fix the launcher setting named above; yoke retries on its next pass.',
  },
  installation_auth_failed: {
    status: 502,
    message: 'Installation {installation} could not authenticate: {detail}',
    recovery: 'Check the app is still installed and its private key is current (APP_ID, PRIVATE_KEY).',
  },
};

export type RefusalContext = Record<string, string | number | undefined>;

export interface Refusal {
  code: Code;
  status: number;
  message: string;
  recovery: string;
}

function fill(template: string, ctx: RefusalContext): string {
  return template.replace(/\{(\w+)\}/g, (whole, key: string) => {
    const value = ctx[key];
    return value === undefined ? whole : String(value);
  });
}

export function makeRefusal(code: Code, ctx: RefusalContext = {}): Refusal {
  const info = CODE_INFO[code];
  return { code, status: info.status, message: fill(info.message, ctx), recovery: fill(info.recovery, ctx) };
}

/** A refusal carried through code that throws. */
export class RefusalError extends Error {
  readonly refusal: Refusal;
  constructor(code: Code, ctx: RefusalContext = {}) {
    const refusal = makeRefusal(code, ctx);
    super(refusal.message);
    this.refusal = refusal;
  }
}
