import { z } from 'zod';
import type { IssueSpend } from '../../store/fleet/spend.js';
import type { PublicRun } from '../../fleet/notices/report.js';
import type { DispatchAnswer } from '../../delivery/gate/check.js';
import type { DeployStep } from '../../delivery/deployments/deploy-stage.js';
import type { ExecutionAnswer } from '../../delivery/runs/executions.js';
import type { QaWork } from '../../delivery/gate/verdicts.js';
import type { DeploymentView } from '../../delivery/runs/view.js';
import type { FleetReport } from '../operator/report.js';
import { DOCTOR_CHECKS } from '../operator/doctor-judge.js';
import type { NextPass } from '../../fleet/spawn/next-pass.js';

// What each API route answers, as zod schemas the server's handlers are typed
// against and the CLI parses every answer with, so neither side reads `any`.
// The large views (a deployment run, a gate check, the fleet report) are the
// delivery half's own types: the schema checks the fields a reader acts on and
// lets the rest through, and the handler's return type holds the whole shape.

/** yoke's error body: every refusal answers with it. */
export const ApiError = z.object({ error: z.object({ code: z.string(), message: z.string(), recovery: z.string() }) });
export type ApiError = z.infer<typeof ApiError>;

/** A view of the server's type T, checked where its readers act on it. */
const viewOf =
  <T>() =>
  (schema: z.ZodType): z.ZodType<T, T> =>
    schema as unknown as z.ZodType<T, T>;

const nullableString = z.string().nullable();

export const OkAnswer = z.object({ ok: z.literal(true) });
export const MessageAnswer = z.object({ ok: z.literal(true), message: z.string() });
export const PushAnswer = z.object({ token: z.string(), branch: z.string(), expires_at: z.string() });
export const ClaimAnswer = z.object({ number: z.number().int() });

export const RunAnswer = viewOf<PublicRun>()(
  z.looseObject({
    id: z.string(),
    repo: z.string(),
    kind: z.string(),
    subject: z.string(),
    status: z.string(),
    outcome: nullableString,
    summary: nullableString,
    outcomeReason: nullableString,
    why: nullableString,
  }),
);
export const RunReportedAnswer = z.object({ ok: z.literal(true), run: RunAnswer });
/** BU06: one issue's cost so far, as the runs listing carries it. */
export const IssueSpendAnswer = viewOf<IssueSpend>()(
  z.looseObject({
    repo: z.string(),
    issue: z.number(),
    usd: z.number(),
    inputTokens: z.number(),
    outputTokens: z.number(),
    runs: z.number(),
    byKind: z.object({ afk: z.number(), lander: z.number(), fix: z.number() }),
  }),
);
export const RunListAnswer = z.object({ runs: z.array(RunAnswer), issues: z.array(IssueSpendAnswer).default([]) });

export const NextPassAnswer = viewOf<NextPass>()(
  z.looseObject({
    repo: z.string(),
    cap: z.number(),
    live: z.object({ fleet: z.number(), here: z.number() }),
    launches: z.array(z.looseObject({ order: z.number(), subject: z.string(), kind: z.string() })),
    waiting: z.array(z.looseObject({ code: z.string(), message: z.string(), recovery: z.string() })),
  }),
);

export const DoctorAnswer = z.object({
  repo: z.string(),
  ok: z.boolean(),
  checks: z.array(
    z.object({
      check: z.enum(DOCTOR_CHECKS),
      state: z.enum(['ok', 'failed', 'skipped']),
      text: z.string(),
      fix: z.string().nullable(),
    }),
  ),
});

export const FleetReportAnswer = viewOf<FleetReport>()(
  z.looseObject({
    generatedAt: z.string(),
    liveCount: z.number(),
    globalCap: z.number(),
    repos: z.array(z.looseObject({ repo: z.string() })),
    deliveries: z.array(z.looseObject({ id: z.string() })),
  }),
);

export const DeploymentRunListAnswer = z.union([
  z.object({
    list: z.array(
      z.object({ id: z.string(), repo: z.string(), commit: z.string(), status: z.string(), stage: nullableString }),
    ),
  }),
  z.object({ runs: z.array(z.string()) }),
]);

export const DeploymentViewAnswer = viewOf<DeploymentView>()(
  z.looseObject({
    id: z.string(),
    repo: z.string(),
    commit: z.string(),
    status: z.string(),
    owed: z.array(z.object({ item: z.string(), detail: z.string(), command: nullableString })),
    stages: z.array(z.looseObject({ name: z.string(), kind: z.enum(['deploy', 'qa']), current: z.boolean() })),
    members: z.array(z.looseObject({ item: z.string() })),
    next: z.array(z.string()),
  }),
);

const WaitAnswer = z.looseObject({ detail: z.string(), command: z.string() });
/** A gate check's answer, recorded with its request id (DX07) and replayed as recorded. */
export const GateChecked = viewOf<DispatchAnswer & { request: string }>()(
  z.looseObject({
    request: z.string(),
    run: z.string(),
    stage: z.string(),
    commit: z.string(),
    state: z.enum(['settled', 'waiting', 'failed', 'deploy']),
    waits: z.array(WaitAnswer),
    capture: z.array(z.object({ groupId: z.string(), planId: z.string(), cases: z.array(z.string()) })),
    triage: z.array(
      z.looseObject({
        plan: z.string(),
        commit: z.string(),
        items: z.array(z.string()),
        retry: z.string(),
        rework: z.string(),
        waive: z.array(z.string()),
        remove: z.array(z.string()),
      }),
    ),
    notices: z.looseObject({ posted: z.array(z.looseObject({ subject: z.string(), to: z.string() })) }).nullable(),
    closeout: z.looseObject({ closed: z.array(z.string()) }).nullable(),
    nextStage: nullableString,
  }),
);
/** DX08: the gate check is still running (202); its result is read back by its request id. */
export const GateCheckInFlight = z.object({
  request: z.string(),
  run: z.string(),
  stage: z.string(),
  state: z.literal('in_flight'),
  wait: z.string().optional(),
});
export const GateCheckAnswer = z.union([GateChecked, GateCheckInFlight]);

export const CheckinAnswer = z.object({
  run: z.string(),
  driver: z.string(),
  lease: z.string(),
  leaseUntil: z.number(),
  tookOver: z.boolean(),
});
export const ExecutionStarted = viewOf<ExecutionAnswer>()(
  z.looseObject({ id: z.string(), subject: z.string(), leaseUntil: z.number() }),
);
export const ExecutionRenewed = z.object({ id: z.string(), leaseUntil: z.number() });
export const ExecutionEnded = z.object({ id: z.string(), state: z.string() });
export const VerdictRecorded = z.object({
  id: z.number(),
  subject: z.string(),
  plan: z.string(),
  case: z.string(),
  result: z.string(),
});

export const QaWorkAnswer = viewOf<QaWork>()(
  z.looseObject({
    run: z.string(),
    repo: z.string(),
    stage: z.string(),
    commit: z.string(),
    subject: z.string(),
    plans: z.array(
      z.looseObject({ planId: z.string(), cases: z.array(z.looseObject({ id: z.string(), passed: z.boolean() })) }),
    ),
  }),
);

export const DeployStepAnswer = viewOf<DeployStep>()(
  z.looseObject({
    state: z.enum(['running', 'succeeded', 'failed']),
    command: nullableString,
    workflow: nullableString,
    detail: nullableString,
    env: z.record(z.string(), z.string()),
    deployment: z.looseObject({ id: z.number() }).nullable(),
    nextStage: nullableString,
  }),
);
