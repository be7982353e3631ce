import { randomUUID } from 'node:crypto';
import { issuesText } from '../kernel/issues-text.js';
import type { z } from 'zod';
import { makeRefusal, type Refusal } from '../kernel/codes/table.js';
import { isBusyCode } from '../delivery/gate/busy.js';
import { ApiError, GateChecked } from '../http/api/answers.js';
import type { DeploymentView } from '../delivery/runs/view.js';
import { ROUTE } from '../http/api/routes.js';
import { routeUrl, type ApiRoute, type DriverPolicy, type ExecResult, type RouteArgs } from './client.js';

export { DEFAULT_DRIVER_POLICY, type DriverPolicy } from './client.js';
import type { Answer, DriverTransport, Sent } from './driver-transport.js';

// The deploy driver, `yoke watch deploy`: it checks in, runs deploy stages,
// gate-checks QA stages until they settle, and captures the automated cases
// of the plans it owns. Each gate check gets a fresh request id, kept across
// its busy and lost-answer retries (DX11); busy answers retry on one schedule
// (DX12); a lost answer is recovered by waiting on the reservation (DX08).

/** Exit codes, documented in docs/cli.md. */
export const EXIT = {
  delivered: 0,
  refused: 1,
  usage: 2,
  qaFailed: 3,
  stayedBusy: 4,
  resultUnconfirmed: 5,
  deployFailed: 6,
} as const;

export type DriverEvent = { event: string } & Record<string, unknown>;

export interface DriverDeps {
  transport: DriverTransport;
  policy: DriverPolicy;
  sleep: (ms: number) => Promise<void>;
  exec: (command: string, env: Record<string, string>) => Promise<ExecResult>;
  emit: (e: DriverEvent) => void;
  newId?: () => string;
  driverId: string;
}

export class DriverStop extends Error {
  constructor(
    readonly exitCode: number,
    readonly refusal: Refusal,
  ) {
    super(refusal.message);
  }
}

const refusalOf = (a: Answer): Refusal | null => {
  const e = ApiError.safeParse(a.json);
  // A code this CLI does not know is still shown with its message and recovery.
  return e.success
    ? {
        code: e.data.error.code as Refusal['code'],
        status: a.status,
        message: e.data.error.message,
        recovery: e.data.error.recovery,
      }
    : null;
};

/** A gate check's answer once it is no longer in flight: what was recorded for the request. */
const GATE_CHECKED = { ...ROUTE.gateCheckResult, answer: GateChecked };

/** An answer read by its route's schema; one this driver cannot read stops it, naming the route. */
function read<R extends ApiRoute>(def: R, a: Answer): z.output<R['answer']> {
  const parsed = def.answer.safeParse(a.json);
  if (parsed.success) return a.json as z.output<R['answer']>;
  const detail = issuesText(parsed.error, 'answer');
  throw new DriverStop(EXIT.refused, makeRefusal('answer_unreadable', { what: `${def.method} ${def.path}`, detail }));
}

export class Driver {
  private lease: string | null = null;
  constructor(private readonly d: DriverDeps) {}

  /** One call retried on the busy schedule (DX12); a lost answer is retried too, for calls that are safe to repeat. */
  private async busyRetried(what: string, send: () => Promise<Sent>): Promise<Answer> {
    for (let retry = 0; ; retry++) {
      const a = await send();
      const refusal = a === 'lost' ? null : refusalOf(a);
      if (a !== 'lost' && !(refusal && isBusyCode(refusal.code))) {
        if (refusal) throw new DriverStop(EXIT.refused, refusal);
        return a;
      }
      if (retry >= this.d.policy.busyDelaysMs.length) {
        throw new DriverStop(
          EXIT.stayedBusy,
          makeRefusal('deployment_run_stayed_busy', {
            run: what,
            code: refusal?.code ?? 'no answer',
            holder: refusal?.message ?? 'yoke did not answer',
            retries: retry,
          }),
        );
      }
      const delayMs = this.d.policy.busyDelaysMs[retry]!;
      this.d.emit({ event: 'retry', what, code: refusal?.code ?? 'lost', attempt: retry + 1, delayMs });
      await this.d.sleep(delayMs);
    }
  }

  /** Sends a route's request, its path built from the route table. */
  private send<R extends ApiRoute>(def: R, args: RouteArgs<R> = {}): Promise<Sent> {
    return this.d.transport.send(def.method, routeUrl(def, args.params, args.query), args.body, args.headers);
  }

  /** One route's call on the busy schedule, its answer read by the route's schema. */
  private async called<R extends ApiRoute>(
    what: string,
    def: R,
    args: RouteArgs<R> = {},
  ): Promise<z.output<R['answer']>> {
    return read(def, await this.busyRetried(what, () => this.send(def, args)));
  }

  async checkIn(run: string): Promise<void> {
    const a = await this.called(run, ROUTE.checkin, {
      params: { run },
      body: { driver: this.d.driverId, lease_seconds: this.d.policy.leaseSeconds, transport: this.d.transport.kind },
    });
    if (this.lease !== a.lease) this.d.emit({ event: 'checkin', run, lease: a.lease, tookOver: a.tookOver });
    this.lease = a.lease;
  }

  /**
   * One logical gate check: a fresh request id, the same id through every
   * busy retry and every lost answer (DX11). A lost answer is recovered by
   * waiting on the reservation: in-flight replies there spend no busy budget (DX10).
   */
  async gateCheck(run: string, stage: string, commit: string): Promise<z.output<typeof GateChecked>> {
    const key = this.d.newId?.() ?? `gc-${randomUUID()}`;
    const envelope = { driver: this.d.driverId, lease: this.lease, stage, commit };
    for (let retry = 0; ; retry++) {
      let a: Sent | 'resend' = await this.send(ROUTE.gateCheck, {
        params: { run, stage },
        body: envelope,
        headers: { 'idempotency-key': key },
      });
      if (a === 'lost' || a.status === 202) a = await this.recover(run, key);
      const refusal = a === 'resend' ? null : refusalOf(a);
      if (a !== 'resend' && !refusal) return read(GATE_CHECKED, a);
      // Never reserved, or failed before recording: safe to send again with the same id (DX07).
      const again = a === 'resend' || refusal!.code === 'dispatch_request_failed';
      if (refusal && !again && !isBusyCode(refusal.code)) throw new DriverStop(EXIT.refused, refusal);
      if (retry >= this.d.policy.busyDelaysMs.length) {
        // DX14: the run and its QA stage are left as they are.
        throw new DriverStop(
          EXIT.stayedBusy,
          makeRefusal('deployment_run_stayed_busy', {
            run,
            code: refusal?.code ?? 'no answer',
            holder: refusal?.message ?? 'the dispatch was never reserved',
            retries: retry,
          }),
        );
      }
      const delayMs = this.d.policy.busyDelaysMs[retry]!;
      this.d.emit({
        event: 'retry',
        what: `gate check ${key}`,
        code: refusal?.code ?? 'resend',
        attempt: retry + 1,
        delayMs,
      });
      await this.d.sleep(delayMs);
    }
  }

  /** DX08: at most `resultWaits` waits on the reservation, each within the hosted cap. */
  private async recover(run: string, key: string): Promise<Answer | 'resend'> {
    for (let wait = 1; wait <= this.d.policy.resultWaits; wait++) {
      this.d.emit({ event: 'recover', request: key, wait });
      const a = await this.send(ROUTE.gateCheckResult, {
        params: { run, request: key },
        query: { wait: String(this.d.policy.resultWaitSeconds) },
      });
      if (a === 'lost' || a.status === 202) continue;
      const refusal = refusalOf(a);
      // Never reserved: the dispatch never ran, so it is sent again with the same id.
      if (refusal?.code === 'dispatch_request_unknown') return 'resend';
      return a;
    }
    throw new DriverStop(
      EXIT.resultUnconfirmed,
      makeRefusal('qa_dispatch_result_unconfirmed', { run, request: key, waits: this.d.policy.resultWaits }),
    );
  }

  async get(run: string): Promise<DeploymentView> {
    return this.called(run, ROUTE.deploymentRun, { params: { run } });
  }

  async create(body: z.input<typeof ROUTE.createDeploymentRun.body>): Promise<DeploymentView> {
    return this.called(body.repo, ROUTE.createDeploymentRun, { body });
  }

  /** A deploy stage: its command runs here with the run id, stage and pinned commit in its environment, or its workflow runs on Actions and is followed (DP02). */
  async deploy(run: string, stage: string): Promise<void> {
    const params = { run, stage };
    const step = await this.called(run, ROUTE.deploy, { params, body: { phase: 'start', by: this.d.driverId } });
    const failed = (detail: string) =>
      new DriverStop(EXIT.deployFailed, makeRefusal('deploy_stage_failed', { run, stage, detail }));
    if (step.state === 'failed') throw failed(step.detail ?? 'it failed');
    if (step.command === null) {
      this.d.emit({ event: 'deploy', run, stage, workflow: step.workflow, deployment: step.deployment?.id ?? null });
      let now = step;
      // The outcome is yoke's reading of GitHub (the workflow run's conclusion, the deployment's statuses), never the driver's.
      while (now.state === 'running') {
        await this.d.sleep(this.d.policy.gatePollMs);
        now = await this.called(run, ROUTE.deploy, { params, body: { phase: 'follow' } });
      }
      this.d.emit({ event: 'deployed', run, stage, outcome: now.state, detail: now.detail });
      if (now.state === 'failed') throw failed(now.detail ?? 'it failed');
      return;
    }
    this.d.emit({ event: 'deploy', run, stage, command: step.command });
    const res = await this.d.exec(step.command, step.env);
    const outcome = res.code === 0 ? 'succeeded' : 'failed';
    await this.called(run, ROUTE.deploy, {
      params,
      body: {
        phase: 'end',
        outcome,
        output: `${res.output}${res.error ? `\n${res.error}` : ''}`.slice(-16_000),
        by: this.d.driverId,
      },
    });
    this.d.emit({ event: 'deployed', run, stage, outcome });
    if (outcome === 'failed') throw failed(`exit ${res.code ?? res.error}`);
  }

  /** QA05: the driver's side of dispatch: the automated cases of the plans it owns, as a deployment-stage execution. */
  async capture(run: string, stage: string, items: { planId: string; cases: string[] }[]): Promise<void> {
    const params = { run, stage };
    for (const c of items) {
      const work = await this.called(run, ROUTE.qaWork, { params, query: { plan: c.planId } });
      // TR12: one key for this start through every retry and lost answer, so it opens one execution; renewed before each case.
      const key = `capture-${this.d.newId?.() ?? randomUUID()}`;
      const lease = { lease_seconds: this.d.policy.executionLeaseSeconds };
      const ex = await this.called(run, ROUTE.startExecution, {
        params,
        body: { plan: c.planId, ...lease },
        headers: { 'idempotency-key': key },
      });
      try {
        for (const kase of (work.plans[0]?.cases ?? []).filter((k) => c.cases.includes(k.id) && !k.passed)) {
          await this.called(run, ROUTE.renewExecution, { params: { run, execution: ex.id }, body: lease });
          const res = await this.d.exec(kase.run ?? '', {
            YOKE_DEPLOYMENT_RUN_ID: run,
            YOKE_STAGE: stage,
            YOKE_COMMIT: work.commit,
            YOKE_REPO: work.repo,
            YOKE_QA_CASE: kase.id,
          });
          const result = res.error ? 'error' : res.code === 0 ? 'pass' : 'fail';
          this.d.emit({ event: 'capture', run, stage, plan: c.planId, case: kase.id, result });
          const evidence =
            `$ ${kase.run}\n${res.output}${res.error ? `\n${res.error}` : ''}\n(exit ${res.code ?? 'none'})`.slice(
              -16_000,
            );
          await this.called(run, ROUTE.verdict, {
            params,
            body: { plan: c.planId, case: kase.id, result, evidence, source: 'capture', by: this.d.driverId },
          });
          if (result !== 'pass') break; // QA05: capture of a plan stops at a failure
        }
      } finally {
        await this.called(run, ROUTE.endExecution, { params: { run, execution: ex.id } });
      }
    }
  }

  /** Drives a run from where it is to its end. */
  async drive(runId: string): Promise<void> {
    await this.checkIn(runId);
    let last = '';
    for (;;) {
      const view = await this.get(runId);
      // TR12: every stage is done, but some accepted member is still owed its close-out; yoke's sweep retries them.
      if (view.status === 'closing') {
        const owed = view.owed.map((o) => `${o.item}: ${o.detail}${o.command ? ` (${o.command})` : ''}`).join('; ');
        if (owed !== last) this.d.emit({ event: 'closing', run: runId, owed: view.owed });
        last = owed;
        await this.d.sleep(this.d.policy.gatePollMs);
        continue;
      }
      if (view.status !== 'active') {
        this.d.emit({ event: 'done', run: runId, status: view.status });
        if (view.status === 'succeeded') return;
        throw new DriverStop(
          EXIT.refused,
          makeRefusal('deployment_run_not_active', { run: runId, status: view.status }),
        );
      }
      const stage = view.stages.find((s) => s.current);
      if (!stage)
        throw new DriverStop(
          EXIT.refused,
          makeRefusal('answer_unreadable', {
            what: `GET ${ROUTE.deploymentRun.path}`,
            detail: `the active run ${runId} has no current stage`,
          }),
        );
      if (stage.name !== last) this.d.emit({ event: 'stage', run: runId, stage: stage.name, kind: stage.kind });
      last = stage.name;
      if (stage.kind === 'deploy') {
        await this.deploy(runId, stage.name);
        continue;
      }
      await this.checkIn(runId);
      const a = await this.gateCheck(runId, stage.name, view.commit);
      this.d.emit({
        event: 'gate',
        run: runId,
        stage: stage.name,
        request: a.request,
        state: a.state,
        waits: a.waits.map((w) => ({ detail: w.detail, command: w.command })),
        notices: a.notices?.posted ?? [],
        closed: a.closeout?.closed ?? [],
      });
      if (a.state === 'settled' || a.nextStage !== stage.name) continue;
      if (a.state === 'failed') {
        const t = a.triage[0];
        if (!t)
          throw new DriverStop(
            EXIT.qaFailed,
            makeRefusal('qa_stage_failed', {
              run: runId,
              plan: 'unknown',
              commit: view.commit,
              items: '',
              commands: `yoke deployment-runs get ${runId}`,
            }),
          );
        const commands = [
          `retry: ${t.retry}`,
          `rework: ${t.rework}`,
          ...t.waive.map((w) => `waive: ${w}`),
          ...t.remove.map((r) => `remove: ${r}`),
        ].join('\n');
        throw new DriverStop(
          EXIT.qaFailed,
          makeRefusal('qa_stage_failed', {
            run: runId,
            plan: t.plan,
            commit: t.commit,
            items: t.items.join(', '),
            commands,
          }),
        );
      }
      // Capture may settle the stage by itself (its end is a settlement): the run is read again either way.
      if (a.capture.length) await this.capture(runId, stage.name, a.capture);
      else await this.d.sleep(this.d.policy.gatePollMs);
    }
  }
}
