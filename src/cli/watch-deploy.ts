import { randomUUID } from 'node:crypto';
import { makeRefusal, type Refusal } from '../kernel/codes/table.js';
import { isBusyCode } from '../delivery/gate/busy.js';
import type { ExecResult } from './client.js';
import type { Answer, DriverTransport, Sent } from './driver-transport.js';

// The deploy driver, `yoke watch deploy`: it checks in, runs deploy stages,
// gate-checks QA stages until they settle, and captures the automated cases
// of the plans it owns. Each gate check gets a fresh request id, kept across
// its busy and lost-answer retries (DX11); busy answers retry on one schedule
// (DX12); a lost answer is recovered by waiting on the reservation (DX08).

export interface DriverPolicy {
  /** DX12: the delay before each busy retry: 15, 30, then 60 seconds, six retries in all. */
  busyDelaysMs: readonly number[];
  /** DX08: how many result waits recover a lost answer, and how long each asks for. */
  resultWaits: number;
  resultWaitSeconds: number;
  leaseSeconds: number;
  /** TR12: how long a capture's plan execution lives without a renewal (renewed before each case). */
  executionLeaseSeconds: number;
  /** Between gate checks of a QA stage that is still waiting. */
  gatePollMs: number;
}

export const DEFAULT_DRIVER_POLICY: DriverPolicy = {
  busyDelaysMs: [15_000, 30_000, 60_000, 60_000, 60_000, 60_000],
  resultWaits: 10,
  resultWaitSeconds: 60,
  leaseSeconds: 120,
  executionLeaseSeconds: 120,
  gatePollMs: 15_000,
};

/** Exit codes, documented in the README. */
export const EXIT = { delivered: 0, refused: 1, usage: 2, qaFailed: 3, stayedBusy: 4, resultUnconfirmed: 5, deployFailed: 6 } as const;

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
  const e = a.json?.error;
  return e && typeof e.code === 'string' ? { code: e.code, status: a.status, message: e.message, recovery: e.recovery } : null;
};

const runPath = (run: string) => `/yoke/api/deployment-runs/${encodeURIComponent(run)}`;

export class Driver {
  private lease: string | null = null;
  constructor(private readonly d: DriverDeps) {}

  /** One call retried on the busy schedule (DX12); a lost answer is retried too, for calls that are safe to repeat. */
  private async busyRetried(what: string, send: () => Promise<Sent>): Promise<Answer> {
    for (let retry = 0; ; retry++) {
      const a = await send();
      const refusal = a === 'lost' ? null : refusalOf(a);
      if (a !== 'lost' && !(refusal && isBusyCode(refusal.code))) {
        if (refusal) throw new DriverStop(EXIT.refused, refusal as Refusal);
        return a;
      }
      if (retry >= this.d.policy.busyDelaysMs.length) {
        throw new DriverStop(EXIT.stayedBusy, makeRefusal('deployment_run_stayed_busy', { run: what, code: refusal?.code ?? 'no answer', holder: refusal?.message ?? 'yoke did not answer', retries: retry }));
      }
      const delayMs = this.d.policy.busyDelaysMs[retry]!;
      this.d.emit({ event: 'retry', what, code: refusal?.code ?? 'lost', attempt: retry + 1, delayMs });
      await this.d.sleep(delayMs);
    }
  }

  async checkIn(run: string): Promise<void> {
    const a = await this.busyRetried(run, () => this.d.transport.send('POST', `${runPath(run)}/checkin`, { driver: this.d.driverId, lease_seconds: this.d.policy.leaseSeconds, transport: this.d.transport.kind }));
    if (this.lease !== a.json.lease) this.d.emit({ event: 'checkin', run, lease: a.json.lease, tookOver: a.json.tookOver });
    this.lease = a.json.lease;
  }

  /**
   * One logical gate check: a fresh request id, the same id through every
   * busy retry and every lost answer (DX11). A lost answer is recovered by
   * waiting on the reservation: in-flight replies there spend no busy budget (DX10).
   */
  async gateCheck(run: string, stage: string, commit: string): Promise<any> {
    const key = this.d.newId?.() ?? `gc-${randomUUID()}`;
    const envelope = { driver: this.d.driverId, lease: this.lease, stage, commit };
    for (let retry = 0; ; retry++) {
      let a: Sent | 'resend' = await this.d.transport.send('POST', `${runPath(run)}/stages/${encodeURIComponent(stage)}/dispatch`, envelope, { 'idempotency-key': key });
      if (a === 'lost' || a.status === 202) a = await this.recover(run, key);
      const refusal = a === 'resend' ? null : refusalOf(a);
      if (a !== 'resend' && !refusal) return a.json;
      // Never reserved, or failed before recording: safe to send again with the same id (DX07).
      const again = a === 'resend' || refusal!.code === 'dispatch_request_failed';
      if (refusal && !again && !isBusyCode(refusal.code)) throw new DriverStop(EXIT.refused, refusal);
      if (retry >= this.d.policy.busyDelaysMs.length) {
        // DX14: the run and its QA stage are left as they are.
        throw new DriverStop(EXIT.stayedBusy, makeRefusal('deployment_run_stayed_busy', { run, code: refusal?.code ?? 'no answer', holder: refusal?.message ?? 'the dispatch was never reserved', retries: retry }));
      }
      const delayMs = this.d.policy.busyDelaysMs[retry]!;
      this.d.emit({ event: 'retry', what: `gate check ${key}`, code: refusal?.code ?? 'resend', attempt: retry + 1, delayMs });
      await this.d.sleep(delayMs);
    }
  }

  /** DX08: at most `resultWaits` waits on the reservation, each within the hosted cap. */
  private async recover(run: string, key: string): Promise<Answer | 'resend'> {
    for (let wait = 1; wait <= this.d.policy.resultWaits; wait++) {
      this.d.emit({ event: 'recover', request: key, wait });
      const a = await this.d.transport.send('GET', `${runPath(run)}/requests/${encodeURIComponent(key)}?wait=${this.d.policy.resultWaitSeconds}`);
      if (a === 'lost' || a.status === 202) continue;
      const refusal = refusalOf(a);
      // Never reserved: the dispatch never ran, so it is sent again with the same id.
      if (refusal?.code === 'dispatch_request_unknown') return 'resend';
      return a;
    }
    throw new DriverStop(EXIT.resultUnconfirmed, makeRefusal('qa_dispatch_result_unconfirmed', { run, request: key, waits: this.d.policy.resultWaits }));
  }

  async get(run: string): Promise<any> {
    return (await this.busyRetried(run, () => this.d.transport.send('GET', runPath(run)))).json;
  }

  async create(body: Record<string, unknown>): Promise<any> {
    return (await this.busyRetried(String(body.repo), () => this.d.transport.send('POST', '/yoke/api/deployment-runs', body))).json;
  }

  /** A deploy stage: its command runs here with the run id, stage and pinned commit in its environment, or its workflow runs on Actions and is followed (DP02). */
  async deploy(run: string, stage: string): Promise<void> {
    const path = `${runPath(run)}/stages/${encodeURIComponent(stage)}/deploy`;
    const step = (await this.busyRetried(run, () => this.d.transport.send('POST', path, { phase: 'start', by: this.d.driverId }))).json;
    const failed = (detail: string) => new DriverStop(EXIT.deployFailed, makeRefusal('deploy_stage_failed', { run, stage, detail }));
    if (step.state === 'failed') throw failed(step.detail);
    if (step.command === null) {
      this.d.emit({ event: 'deploy', run, stage, workflow: step.workflow, deployment: step.deployment?.id ?? null });
      let now = step;
      // The outcome is yoke's reading of GitHub (the workflow run's conclusion, the deployment's statuses), never the driver's.
      while (now.state === 'running') {
        await this.d.sleep(this.d.policy.gatePollMs);
        now = (await this.busyRetried(run, () => this.d.transport.send('POST', path, { phase: 'follow' }))).json;
      }
      this.d.emit({ event: 'deployed', run, stage, outcome: now.state, detail: now.detail });
      if (now.state === 'failed') throw failed(now.detail);
      return;
    }
    this.d.emit({ event: 'deploy', run, stage, command: step.command });
    const res = await this.d.exec(step.command, step.env);
    const outcome = res.code === 0 ? 'succeeded' : 'failed';
    await this.busyRetried(run, () => this.d.transport.send('POST', path, { phase: 'end', outcome, output: `${res.output}${res.error ? `\n${res.error}` : ''}`.slice(-16_000), by: this.d.driverId }));
    this.d.emit({ event: 'deployed', run, stage, outcome });
    if (outcome === 'failed') throw failed(`exit ${res.code ?? res.error}`);
  }

  /** QA05: the driver's side of dispatch: the automated cases of the plans it owns, as a deployment-stage execution. */
  async capture(run: string, stage: string, items: { planId: string; cases: string[] }[]): Promise<void> {
    const base = `${runPath(run)}/stages/${encodeURIComponent(stage)}`;
    for (const c of items) {
      const work = (await this.busyRetried(run, () => this.d.transport.send('GET', `${base}/work?plan=${encodeURIComponent(c.planId)}`))).json;
      // TR12: one key for this start through every retry and lost answer, so it opens one execution; renewed before each case.
      const key = `capture-${this.d.newId?.() ?? randomUUID()}`;
      const lease = { lease_seconds: this.d.policy.executionLeaseSeconds };
      const ex = (await this.busyRetried(run, () => this.d.transport.send('POST', `${base}/executions`, { plan: c.planId, ...lease }, { 'idempotency-key': key }))).json;
      try {
        for (const kase of work.plans[0].cases.filter((k: { id: string; passed: boolean }) => c.cases.includes(k.id) && !k.passed)) {
          await this.busyRetried(run, () => this.d.transport.send('POST', `${runPath(run)}/executions/${ex.id}/renew`, lease));
          const res = await this.d.exec(kase.run, { YOKE_DEPLOYMENT_RUN_ID: run, YOKE_STAGE: stage, YOKE_COMMIT: work.commit, YOKE_REPO: work.repo, YOKE_QA_CASE: kase.id });
          const result = res.error ? 'error' : res.code === 0 ? 'pass' : 'fail';
          this.d.emit({ event: 'capture', run, stage, plan: c.planId, case: kase.id, result });
          const evidence = `$ ${kase.run}\n${res.output}${res.error ? `\n${res.error}` : ''}\n(exit ${res.code ?? 'none'})`.slice(-16_000);
          await this.busyRetried(run, () => this.d.transport.send('POST', `${base}/verdicts`, { plan: c.planId, case: kase.id, result, evidence, source: 'capture', by: this.d.driverId }));
          if (result !== 'pass') break; // QA05: capture of a plan stops at a failure
        }
      } finally {
        await this.busyRetried(run, () => this.d.transport.send('POST', `${runPath(run)}/executions/${ex.id}/end`));
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
        const owed = view.owed.map((o: { item: string; detail: string; command: string | null }) => `${o.item}: ${o.detail}${o.command ? ` (${o.command})` : ''}`).join('; ');
        if (owed !== last) this.d.emit({ event: 'closing', run: runId, owed: view.owed });
        last = owed;
        await this.d.sleep(this.d.policy.gatePollMs);
        continue;
      }
      if (view.status !== 'active') {
        this.d.emit({ event: 'done', run: runId, status: view.status });
        if (view.status === 'succeeded') return;
        throw new DriverStop(EXIT.refused, makeRefusal('deployment_run_not_active', { run: runId, status: view.status }));
      }
      const stage = view.stages.find((s: { current: boolean }) => s.current);
      if (stage.name !== last) this.d.emit({ event: 'stage', run: runId, stage: stage.name, kind: stage.kind });
      last = stage.name;
      if (stage.kind === 'deploy') {
        await this.deploy(runId, stage.name);
        continue;
      }
      await this.checkIn(runId);
      const a = await this.gateCheck(runId, stage.name, view.commit);
      this.d.emit({ event: 'gate', run: runId, stage: stage.name, request: a.request, state: a.state, waits: a.waits.map((w: { detail: string; command: string }) => ({ detail: w.detail, command: w.command })), notices: a.notices?.posted ?? [], closed: a.closeout?.closed ?? [] });
      if (a.state === 'settled' || a.nextStage !== stage.name) continue;
      if (a.state === 'failed') {
        const t = a.triage[0];
        const commands = [`retry: ${t.retry}`, `rework: ${t.rework}`, ...t.waive.map((w: string) => `waive: ${w}`), ...t.remove.map((r: string) => `remove: ${r}`)].join('\n');
        throw new DriverStop(EXIT.qaFailed, makeRefusal('qa_stage_failed', { run: runId, plan: t.plan, commit: t.commit, items: t.items.join(', '), commands }));
      }
      // Capture may settle the stage by itself (its end is a settlement): the run is read again either way.
      if (a.capture.length) await this.capture(runId, stage.name, a.capture);
      else await this.d.sleep(this.d.policy.gatePollMs);
    }
  }
}
