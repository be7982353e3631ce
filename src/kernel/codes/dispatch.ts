import { code } from './define.js';

// The delivery half's dispatch codes: plan executions, idempotent requests, and contention (the busy answers
// a caller may retry). Part of the one table in codes/table.ts.

export const DISPATCH_CODES = {
  execution_ended: code<{ run: string; execution: string }>({
    status: 409,
    message: (p) => `Plan execution ${p.execution} of run ${p.run} has ended; it cannot be renewed.`,
    recovery: (p) =>
      `Start the plan again (\`yoke qa plan run\`); see \`yoke deployment-runs get ${p.run}\` for what the stage waits on.`,
  }),
  idempotency_key_required: code({
    status: 400,
    message: () => 'A dispatch needs an `Idempotency-Key` header: the request id of this logical dispatch.',
    recovery: () => 'Send a fresh id (e.g. a UUID) with each gate check, and the same id again when you retry it.',
  }),
  idempotency_key_reused: code<{ request: string }>({
    status: 422,
    message: (p) => `Request id ${p.request} was already used with another request envelope.`,
    recovery: () => 'Retry a dispatch with its identical envelope; a new gate check takes a fresh id.',
  }),
  idempotency_request_in_flight: code<{ request: string; run: string }>({
    status: 409,
    message: (p) => `Request ${p.request} is still in flight.`,
    recovery: (p) =>
      `Wait for its result: \`GET /yoke/api/deployment-runs/${p.run}/requests/${p.request}?wait=60\`, with the same id.`,
  }),
  dispatch_request_unknown: code<{ request: string; run: string }>({
    status: 404,
    message: (p) => `No dispatch ${p.request} was reserved for run ${p.run}.`,
    recovery: () => 'Send the dispatch again with the same id and envelope: it was never reserved, so nothing ran.',
  }),
  dispatch_request_failed: code<{ request: string; detail: string }>({
    status: 409,
    message: (p) => `Dispatch ${p.request} failed before it recorded a result: ${p.detail}`,
    recovery: () =>
      'Send it again with the same id and envelope; a dispatch that recorded no result is safe to repeat.',
  }),
  dispatch_envelope_invalid: code<{ run: string; detail: string }>({
    status: 409,
    message: (p) => `The dispatch envelope does not match run ${p.run}: ${p.detail}`,
    recovery: (p) =>
      `Read the run (\`yoke deployment-runs get ${p.run}\`), check in again, and dispatch with its stage and pinned commit.`,
  }),
  run_busy: code<{ run: string; holder: string }>({
    status: 409,
    message: (p) => `Deployment run ${p.run} is busy with another dispatch (${p.holder}).`,
    recovery: (p) =>
      `Retry with the same request id once it finishes; \`yoke watch deploy -- ${p.run}\` does this by itself.`,
  }),
  qa_plan_busy: code<{ run: string; holder: string }>({
    status: 409,
    message: (p) => `A plan execution (${p.holder}) is writing verdicts to run ${p.run}.`,
    recovery: () => 'Retry with the same request id once it ends.',
  }),
  qa_ownership_busy: code<{ run: string; stage: string; holder: string }>({
    status: 409,
    message: (p) => `Plan ownership of run ${p.run} at ${p.stage} is being frozen by ${p.holder}.`,
    recovery: () => 'Retry with the same request id in a moment.',
  }),
  deployment_start_lock_busy: code<{ repo: string; holder: string }>({
    status: 409,
    message: (p) => `Another deployment run of ${p.repo} is being started (${p.holder}).`,
    recovery: () => 'Retry in a moment; if it started, resume it with `yoke watch deploy -- RUN-ID`.',
  }),
  deployment_membership_changed: code<{ run: string }>({
    status: 409,
    message: (p) => `The members of run ${p.run} changed while its gate was checked.`,
    recovery: () => 'Retry with the same request id: the check is read again.',
  }),
  lock_timeout: code<{ detail: string }>({
    status: 503,
    message: (p) => `yoke's database stayed locked past its busy timeout: ${p.detail}`,
    recovery: () => 'Retry with the same request id; nothing was recorded.',
  }),
  statement_cancelled: code<{ detail: string }>({
    status: 503,
    message: (p) => `A database statement was interrupted: ${p.detail}`,
    recovery: () => 'Retry with the same request id; nothing was recorded.',
  }),
  deployment_run_stayed_busy: code<{ run: string; code: string; holder: string; retries: number }>({
    status: 409,
    message: (p) =>
      `Deployment run ${p.run} stayed busy through ${p.retries} retries (${p.code}: ${p.holder}). The run and its QA stage are unchanged.`,
    recovery: (p) => `Once ${p.holder} finishes, resume with \`yoke watch deploy -- ${p.run}\`.`,
  }),
  qa_dispatch_result_unconfirmed: code<{ run: string; request: string; waits: number }>({
    status: 504,
    message: (p) =>
      `The result of dispatch ${p.request} stayed unknown through ${p.waits} waits; run ${p.run} is resumable at its QA stage.`,
    recovery: (p) =>
      `Read \`yoke deployment-runs get ${p.run}\` and the driver capture, then re-drive the same run with \`yoke watch deploy -- ${p.run}\`. Do not use --fresh or the database door to recover an unknown result.`,
  }),
} as const;
