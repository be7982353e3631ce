import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RepoRef, ReviewView } from '../../../src/forge/types.js';
import { createDeploymentRun, removeMember } from '../../../src/delivery/runs/deployment-runs.js';
import { checkIn, startExecution } from '../../../src/delivery/runs/executions.js';
import { awaitResult, dispatchIdempotent, type DispatchEnvelope } from '../../../src/delivery/gate/idempotent-check.js';
import { openStore } from '../../../src/store/store.js';
import { FakeForge } from '../../helpers/fake-forge.js';
import { REPO, makeDeliveryHarness, type DeliveryHarness, actorOf } from '../../helpers/delivery.js';

const QA_ONLY = {
  delivery: {
    stages: [
      { name: 'qa', kind: 'qa' },
      { name: 'production', kind: 'deploy', command: './deploy.sh' },
    ],
  },
};
const instant = async () => {};
const never = () => new Promise<void>(() => {});

/** A forge whose review reads wait until the test lets them go (a dispatch held in flight). */
class HeldForge extends FakeForge {
  hold: Promise<void> | null = null;
  onRead: (() => void) | null = null;
  failReads = 0;
  override async listReviews(repo: RepoRef, pr: number): Promise<ReviewView[]> {
    this.onRead?.();
    if (this.hold) await this.hold;
    if (this.failReads > 0) {
      this.failReads--;
      throw new Error('GitHub answered 502');
    }
    return super.listReviews(repo, pr);
  }
}

let cleanup: (() => void) | null = null;
afterEach(() => {
  cleanup?.();
  cleanup = null;
});

async function setup(
  opts: { forge?: FakeForge; store?: ReturnType<typeof openStore> } = {},
): Promise<DeliveryHarness & { run: string; env: DispatchEnvelope }> {
  const h = await makeDeliveryHarness({ config: QA_ONLY, forge: opts.forge, store: opts.store });
  await h.attach(1, 'checkout');
  const r = await createDeploymentRun(h.fleet, { repo: REPO, creator: 'maint' });
  if (!r.ok) throw new Error(r.refusal.message);
  return { ...h, run: r.value.id, env: { driver: 'drv', lease: null, stage: 'qa', commit: r.value.commit } };
}

const send = (
  h: DeliveryHarness & { run: string; env: DispatchEnvelope },
  key: string,
  over: Partial<DispatchEnvelope> = {},
  sleep: (ms: number) => Promise<void> = never,
  limit = 25_000,
) =>
  dispatchIdempotent(
    h.fleet,
    { runId: h.run, stage: 'qa', requestId: key, envelope: { ...h.env, ...over } },
    { responseLimitMs: limit },
    sleep,
  );
const code = (r: { body: string }) => (JSON.parse(r.body) as { error?: { code: string } }).error?.code ?? 'ok';

describe('idempotent dispatch', () => {
  it('DX07 a completed dispatch replays byte for byte, with no second effect', async () => {
    const h = await setup();
    const first = await send(h, 'gate-check-1');
    const comments = h.forge.comments.length;
    const again = await send(h, 'gate-check-1');
    expect([first.status, first.replayed, again.status, again.replayed]).toEqual([200, false, 200, true]);
    expect(again.body).toBe(first.body);
    expect(h.forge.comments.length).toBe(comments);
    expect(JSON.parse(first.body)).toMatchObject({
      request: 'gate-check-1',
      state: 'waiting',
      woken: [{ subject: 'APP-1' }],
    });
  });

  it('DX07 a dispatch that failed before recording its result is safe to send again with the same id', async () => {
    const forge = new HeldForge();
    const h = await setup({ forge });
    forge.failReads = 1;
    const failed = await send(h, 'gate-check-2');
    expect([failed.status, code(failed)]).toEqual([409, 'dispatch_request_failed']);
    // The error's own text stays in yoke's log; the client is told where to look.
    expect(JSON.parse(failed.body).error.message).toBe(
      'Dispatch gate-check-2 failed before it recorded a result: an internal error; the yoke log has it under request gate-check-2',
    );
    expect(failed.body).not.toContain('502');
    expect((await h.store.dispatchRequests.get('gate-check-2'))!.state).toBe('failed');
    const retried = await send(h, 'gate-check-2');
    expect([retried.status, retried.replayed, JSON.parse(retried.body).state]).toEqual([200, false, 'waiting']);
    expect((await h.store.dispatchRequests.get('gate-check-2'))!.attempts).toBe(2);
  });

  it('refuses the same id with another envelope, and a dispatch without an id', async () => {
    const h = await setup();
    await send(h, 'gate-check-3');
    expect(code(await send(h, 'gate-check-3', { driver: 'someone-else' }))).toBe('idempotency_key_reused');
    expect(
      code(
        await dispatchIdempotent(
          h.fleet,
          { runId: h.run, stage: 'qa', requestId: null, envelope: h.env },
          { responseLimitMs: 1 },
          instant,
        ),
      ),
    ).toBe('idempotency_key_required');
    expect(code(await send(h, 'gate-check-4', { commit: 'c1' }))).toBe('dispatch_envelope_invalid');
  });

  it("a gate check of a stage the run does not have names the run's stages, not one to wait for", async () => {
    const h = await setup();
    const typo = await dispatchIdempotent(
      h.fleet,
      { runId: h.run, stage: 'stagign-qa', requestId: 'gate-typo', envelope: { ...h.env, stage: 'stagign-qa' } },
      { responseLimitMs: 25_000 },
      never,
    );
    expect([typo.status, JSON.parse(typo.body).error]).toEqual([
      404,
      {
        code: 'deployment_stage_unknown',
        message: `Deployment run ${h.run} has no stage stagign-qa.`,
        recovery: 'Name one of its stages: qa, production.',
      },
    ]);
    expect(code(await send(h, 'gate-later', { stage: 'production' }))).toBe('dispatch_envelope_invalid');
  });

  it('DX10 an in-flight copy is answered at once; DX08 past the response limit the reservation answers 202 and the result is waited for', async () => {
    const forge = new HeldForge();
    const h = await setup({ forge });
    let release!: () => void;
    forge.hold = new Promise((r) => (release = r));
    let timeUp!: () => void;
    const limit = new Promise<void>((r) => (timeUp = r));
    const pending = send(h, 'gate-check-5', {}, () => limit);
    await new Promise((r) => setTimeout(r, 10));
    const copy = await send(h, 'gate-check-5');
    expect([copy.status, code(copy)]).toEqual([409, 'idempotency_request_in_flight']);
    expect(code(await send(h, 'gate-check-6'))).toBe('run_busy');
    timeUp();
    const accepted = await pending;
    expect([accepted.status, JSON.parse(accepted.body)]).toEqual([
      202,
      {
        request: 'gate-check-5',
        run: h.run,
        stage: 'qa',
        state: 'in_flight',
        wait: `/yoke/api/deployment-runs/${h.run}/requests/gate-check-5?wait=60`,
      },
    ]);
    expect(
      (await awaitResult(h.fleet, { runId: h.run, requestId: 'gate-check-5' }, { waitMs: 0, sleep: instant })).status,
    ).toBe(202);
    release();
    forge.hold = null;
    const result = await awaitResult(
      h.fleet,
      { runId: h.run, requestId: 'gate-check-5' },
      { waitMs: 60_000, sleep: (ms) => new Promise((r) => setTimeout(r, ms)), pollMs: 5 },
    );
    expect([result.status, result.replayed]).toEqual([200, true]);
    expect((await send(h, 'gate-check-5')).body).toBe(result.body);
  });

  it("DX07 TR12 what a stopped process left in flight is freed once its lease ends, and the same id is then safe to send again; a live process's reservation is never touched", async () => {
    const h = await setup();
    await h.store.processes.register({ id: 'p-door', host: 'test-host', pid: 2, leaseMs: 30_000 });
    await h.store.dispatchRequests.reserve({
      requestId: 'gate-check-7',
      runId: h.run,
      stage: 'qa',
      envelopeHash: 'x',
      driver: 'drv',
      owner: 'p-door',
      at: 0,
    });
    await h.store.dispatchRequests.reserve({
      requestId: 'gate-check-8',
      runId: 'dr-other',
      stage: 'qa',
      envelopeHash: 'y',
      driver: 'drv',
      owner: h.fleet.processId,
      at: 0,
    });
    // Another process's start frees nothing while the holder's lease lives.
    expect(await h.store.dispatchRequests.failLapsed(h.clock.now())).toBe(0);
    expect(
      code(await awaitResult(h.fleet, { runId: h.run, requestId: 'gate-check-7' }, { waitMs: 0, sleep: instant })),
    ).toBe('ok');
    h.clock.advance(30_000);
    expect(
      code(await awaitResult(h.fleet, { runId: h.run, requestId: 'gate-check-7' }, { waitMs: 0, sleep: instant })),
    ).toBe('dispatch_request_failed');
    expect((await h.store.dispatchRequests.get('gate-check-8'))?.state).toBe('in_flight');
  });

  it("TR12 a process that stalled past its lease fails nothing of the process that took its request again: fail, like complete, is the holder's alone", async () => {
    const h = await setup();
    const reserve = (owner: string) =>
      h.store.dispatchRequests.reserve({
        requestId: 'gate-check-9',
        runId: h.run,
        stage: 'qa',
        envelopeHash: 'x',
        driver: 'drv',
        owner,
        at: 0,
      });
    await reserve('p-stalled');
    // Its lease lapsed; the request was failed and taken again by this process.
    await reserve(h.fleet.processId);
    expect(await h.store.dispatchRequests.fail('gate-check-9', 'the stalled one gave up', 1, 'p-stalled')).toBe(false);
    expect((await h.store.dispatchRequests.get('gate-check-9'))?.state).toBe('in_flight');
    expect(await h.store.dispatchRequests.fail('gate-check-9', 'given up', 2, h.fleet.processId)).toBe(true);
    expect((await h.store.dispatchRequests.get('gate-check-9'))?.state).toBe('failed');
  });
});

describe('busy answers, each from its contention point, refused before anything is reserved', () => {
  const unreserved = async (h: DeliveryHarness, key: string) =>
    expect(await h.store.dispatchRequests.get(key)).toBeUndefined();

  it('DX12/DX13 qa_checkin_busy: another driver holds the lease', async () => {
    const h = await setup();
    await checkIn(h.fleet, h.run, { driver: 'other', lease_seconds: 60 });
    const r = await send(h, 'busy-checkin');
    expect([r.status, code(r), JSON.parse(r.body).error.message]).toEqual([
      409,
      'qa_checkin_busy',
      `Deployment run ${h.run} is driven by other, whose lease runs 60 s more.`,
    ]);
    await unreserved(h, 'busy-checkin');
  });

  it('DX12/DX13 qa_plan_busy: a deployment-stage plan execution is writing', async () => {
    const h = await setup();
    await h.attach(2, 'smoke');
    await h.attach(3, 'smoke');
    const h2 = await setup();
    await h2.attach(2, 'smoke');
    await h2.attach(3, 'smoke');
    // A fresh run whose QA entry sees the shared plan.
    const r = await createDeploymentRun(h2.fleet, {
      repo: REPO,
      supersedes: h2.run,
      commit: h2.forge.commit(REPO, { x: 'y' }),
    });
    if (!r.ok) throw new Error(r.refusal.message);
    const ex = await startExecution(h2.fleet, { runId: r.value.id, stage: 'qa' }, { plan: 'smoke' }, null);
    expect(ex.ok).toBe(true);
    const busy = await dispatchIdempotent(
      h2.fleet,
      {
        runId: r.value.id,
        stage: 'qa',
        requestId: 'busy-plan',
        envelope: { driver: 'drv', lease: null, stage: 'qa', commit: r.value.commit },
      },
      { responseLimitMs: 1 },
      never,
    );
    expect(code(busy)).toBe('qa_plan_busy');
    await unreserved(h2, 'busy-plan');
  });

  it('DX12/DX13 qa_ownership_busy: an ownership freeze is in progress', async () => {
    const h = await setup();
    await h.store.workLocks.take(`freeze:${h.run}:qa`, 'freeze-elsewhere', h.clock.now(), 60_000);
    expect(code(await send(h, 'busy-freeze'))).toBe('qa_ownership_busy');
    await unreserved(h, 'busy-freeze');
  });

  it('DX12 deployment_start_lock_busy: another start in the project', async () => {
    const h = await makeDeliveryHarness({ config: QA_ONLY });
    await h.store.workLocks.take(`start:${REPO}`, 'start-elsewhere', h.clock.now(), 60_000);
    expect(await createDeploymentRun(h.fleet, { repo: REPO })).toMatchObject({
      ok: false,
      refusal: {
        code: 'deployment_start_lock_busy',
        message: `Another deployment run of ${REPO} is being started (start-elsewhere).`,
      },
    });
    expect(await h.store.deploymentRuns.list()).toEqual([]);
  });

  it('DX13 deployment_membership_changed: a member removed while the gate was read; nothing of the check is written (DX12)', async () => {
    const forge = new HeldForge();
    const h = await setup({ forge });
    forge.onRead = () => {
      forge.onRead = null;
      void removeMember(h.fleet, actorOf('maint'), h.run, { item: 'APP-3', reason: 'mid-check' });
    };
    const r = await send(h, 'busy-members');
    expect(code(r)).toBe('deployment_membership_changed');
    expect(await h.store.qa.wakes(h.run)).toEqual([]);
    expect((await h.store.dispatchRequests.get('busy-members'))!.state).toBe('failed');
    expect((await send(h, 'busy-members')).status).toBe(200);
  });

  it('DX12/DX13 lock_timeout: SQLite stayed locked past its busy timeout; statement_cancelled: an interrupted statement', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'yoke-busy-'));
    cleanup = () => rmSync(dir, { recursive: true, force: true });
    const store = openStore(join(dir, 'yoke.db'), { busyTimeoutMs: 20 });
    const h = await makeDeliveryHarness({ config: QA_ONLY, store });
    await h.attach(1, 'checkout');
    const run = await createDeploymentRun(h.fleet, { repo: REPO });
    if (!run.ok) throw new Error(run.refusal.message);
    const other = new Database(join(dir, 'yoke.db'));
    other.exec('BEGIN IMMEDIATE');
    const env = { driver: 'drv', lease: null, stage: 'qa', commit: run.value.commit };
    const r = await dispatchIdempotent(
      h.fleet,
      { runId: run.value.id, stage: 'qa', requestId: 'busy-sqlite', envelope: env },
      { responseLimitMs: 1 },
      never,
    );
    expect([r.status, code(r)]).toEqual([503, 'lock_timeout']);
    other.exec('ROLLBACK');
    other.close();
    expect(await store.dispatchRequests.get('busy-sqlite')).toBeUndefined();
    const write = store.write;
    store.write = () => {
      throw Object.assign(new Error('interrupted'), { code: 'SQLITE_INTERRUPT' });
    };
    expect(
      code(
        await dispatchIdempotent(
          h.fleet,
          { runId: run.value.id, stage: 'qa', requestId: 'busy-sqlite', envelope: env },
          { responseLimitMs: 1 },
          never,
        ),
      ),
    ).toBe('statement_cancelled');
    store.write = write;
    expect(
      (
        await dispatchIdempotent(
          h.fleet,
          { runId: run.value.id, stage: 'qa', requestId: 'busy-sqlite', envelope: env },
          { responseLimitMs: 60_000 },
          never,
        )
      ).status,
    ).toBe(200);
    await store.close();
  });
});
