import { describe, expect, it } from 'vitest';
import type { Answer, DriverTransport, Sent } from '../../src/cli/driver-transport.js';
import { DEFAULT_DRIVER_POLICY, Driver, DriverStop, EXIT, type DriverEvent } from '../../src/cli/watch-deploy.js';

// The driver's schedules with an injected clock: no real sleeps.

const ok = (json: unknown): Answer => ({ status: 200, json });
const busy = (code: string): Answer => ({
  status: 409,
  json: { error: { code, message: `${code} (held by ci-7)`, recovery: 'retry' } },
});
const inFlight: Answer = { status: 202, json: { state: 'in_flight' } };
const settled = (request: string) =>
  ok({
    request,
    run: 'dr-1',
    stage: 'qa',
    commit: 'c9',
    state: 'settled',
    nextStage: null,
    woken: [],
    waits: [],
    members: [],
    groups: [],
    capture: [],
    triage: [],
    notices: { posted: [] },
    closeout: { closed: [] },
  });
/** A deploy stage's answer (DeployStep). */
const step = (s: {
  state: string;
  command: string | null;
  workflow: string | null;
  deployment: { id: number } | null;
  detail: string;
}) => ok({ run: 'dr-1', repo: 'acme/api', stage: 'staging', commit: 'c9', env: {}, nextStage: null, ...s });

/** A transport that answers dispatches and result waits from a script, and records every request. */
function scripted(
  dispatches: Sent[],
  waits: Sent[] = [],
): DriverTransport & { log: { method: string; path: string; key?: string }[] } {
  const log: { method: string; path: string; key?: string }[] = [];
  return {
    kind: 'https',
    log,
    async send(method, path, _body, headers = {}) {
      log.push({ method, path, key: headers['idempotency-key'] });
      if (path.endsWith('/dispatch')) return dispatches.shift() ?? settled(headers['idempotency-key']!);
      if (path.includes('/requests/')) return waits.shift() ?? inFlight;
      return ok({});
    },
  };
}

function driver(
  transport: DriverTransport,
  exec: (command: string) => Promise<{ code: number; output: string }> = async () => ({ code: 0, output: '' }),
) {
  const slept: number[] = [];
  const events: DriverEvent[] = [];
  let n = 0;
  const d = new Driver({
    transport,
    policy: DEFAULT_DRIVER_POLICY,
    sleep: async (ms) => void slept.push(ms),
    exec,
    emit: (e) => events.push(e),
    newId: () => `gc-${++n}`,
    driverId: 'ci-7',
  });
  return { d, slept, events };
}

const stopOf = async (p: Promise<unknown>): Promise<DriverStop> => {
  try {
    await p;
  } catch (err) {
    if (err instanceof DriverStop) return err;
    throw err;
  }
  throw new Error('the driver did not stop');
};

describe('the deploy driver', () => {
  it('DX11 keeps one request id through busy and lost-answer retries, retrying after 15, 30, then 60 s (DX12); the next gate check takes a fresh id', async () => {
    const t = scripted(
      [busy('run_busy'), busy('qa_plan_busy'), 'lost', busy('idempotency_request_in_flight')],
      [{ status: 409, json: { error: { code: 'dispatch_request_unknown', message: 'never reserved', recovery: '' } } }],
    );
    const { d, slept } = driver(t);
    const first = await d.gateCheck('dr-1', 'qa', 'c9');
    expect(first.request).toBe('gc-1');
    const keys = t.log.filter((l) => l.path.endsWith('/dispatch')).map((l) => l.key);
    expect(keys).toEqual(['gc-1', 'gc-1', 'gc-1', 'gc-1', 'gc-1']);
    expect(slept).toEqual([15_000, 30_000, 60_000, 60_000]);
    await d.gateCheck('dr-1', 'qa', 'c9');
    expect(t.log.filter((l) => l.path.endsWith('/dispatch')).at(-1)!.key).toBe('gc-2');
  });

  it('DX14 when every retry stays busy it stops with deployment_run_stayed_busy after six retries (DX12), sending nothing else', async () => {
    const t = scripted(Array.from({ length: 7 }, () => busy('qa_ownership_busy')));
    const { d, slept } = driver(t);
    const stop = await stopOf(d.gateCheck('dr-1', 'qa', 'c9'));
    expect([stop.exitCode, stop.refusal.code]).toEqual([EXIT.stayedBusy, 'deployment_run_stayed_busy']);
    expect(stop.refusal.message).toBe(
      'Deployment run dr-1 stayed busy through 6 retries (qa_ownership_busy: qa_ownership_busy (held by ci-7)). The run and its QA stage are unchanged.',
    );
    expect(stop.refusal.recovery).toBe(
      'Once qa_ownership_busy (held by ci-7) finishes, resume with `yoke watch deploy -- dr-1`.',
    );
    expect(slept).toEqual([15_000, 30_000, 60_000, 60_000, 60_000, 60_000]);
    expect(t.log.filter((l) => l.path.endsWith('/dispatch'))).toHaveLength(7);
    expect(t.log.every((l) => l.path.endsWith('/dispatch'))).toBe(true);
  });

  it('DX08/DX10 a lost answer is recovered by waiting on the reservation; in-flight replies there spend no busy budget', async () => {
    const t = scripted(
      ['lost'],
      [inFlight, inFlight, inFlight, inFlight, inFlight, inFlight, inFlight, inFlight, inFlight, settled('gc-1')],
    );
    const { d, slept, events } = driver(t);
    expect((await d.gateCheck('dr-1', 'qa', 'c9')).state).toBe('settled');
    expect(slept).toEqual([]);
    expect(t.log.filter((l) => l.path.includes('/requests/gc-1?wait=60'))).toHaveLength(10);
    expect(events.filter((e) => e.event === 'recover').map((e) => e.wait)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });

  it('DX15 an unanswered recovery stops with qa_dispatch_result_unconfirmed after ten waits, telling the operator how to re-drive', async () => {
    const t = scripted([{ status: 202, json: { state: 'in_flight' } }]);
    const { d } = driver(t);
    const stop = await stopOf(d.gateCheck('dr-1', 'qa', 'c9'));
    expect([stop.exitCode, stop.refusal.code]).toEqual([EXIT.resultUnconfirmed, 'qa_dispatch_result_unconfirmed']);
    expect(stop.refusal.recovery).toBe(
      'Read `yoke deployment-runs get dr-1` and the driver capture, then re-drive the same run with `yoke watch deploy -- dr-1`. Do not use --fresh or the database door to recover an unknown result.',
    );
    expect(t.log.filter((l) => l.path.includes('/requests/'))).toHaveLength(10);
  });

  it('a refusal that is not busy stops at once with its own recovery', async () => {
    const t = scripted([
      {
        status: 409,
        json: { error: { code: 'deployment_stage_not_current', message: 'not current', recovery: 'see get' } },
      },
    ]);
    const { d, slept } = driver(t);
    const stop = await stopOf(d.gateCheck('dr-1', 'qa', 'c9'));
    expect([stop.exitCode, stop.refusal.code, slept]).toEqual([EXIT.refused, 'deployment_stage_not_current', []]);
  });

  it('DP02 a workflow stage is followed to its end by asking yoke, never run here; its failure stops the driver with exit 6', async () => {
    const bodies: unknown[] = [];
    const answers = [
      step({
        state: 'running',
        command: null,
        workflow: 'deploy.yml',
        deployment: { id: 5 },
        detail: 'started by ci-7',
      }),
      step({
        state: 'running',
        command: null,
        workflow: 'deploy.yml',
        deployment: { id: 5 },
        detail: 'workflow run 9 is in_progress',
      }),
      step({
        state: 'failed',
        command: null,
        workflow: 'deploy.yml',
        deployment: { id: 5 },
        detail: 'workflow run 9 ended failure',
      }),
    ];
    const t: DriverTransport = { kind: 'https', send: async (_m, _p, body) => (bodies.push(body), answers.shift()!) };
    const execs: string[] = [];
    const { d, slept, events } = driver(t, async (c) => (execs.push(c), { code: 0, output: '' }));
    const stop = await stopOf(d.deploy('dr-1', 'staging'));
    expect([stop.exitCode, stop.refusal.code, stop.refusal.message]).toEqual([
      EXIT.deployFailed,
      'deploy_stage_failed',
      'Deploy stage staging of run dr-1 failed: workflow run 9 ended failure',
    ]);
    expect(bodies).toEqual([{ phase: 'start', by: 'ci-7' }, { phase: 'follow' }, { phase: 'follow' }]);
    expect([execs, slept]).toEqual([[], [DEFAULT_DRIVER_POLICY.gatePollMs, DEFAULT_DRIVER_POLICY.gatePollMs]]);
    expect(events.at(-1)).toEqual({
      event: 'deployed',
      run: 'dr-1',
      stage: 'staging',
      outcome: 'failed',
      detail: 'workflow run 9 ended failure',
    });
  });

  it('DP01 a start GitHub refused (no deployment made) stops the driver with exit 6 and the reason, running nothing', async () => {
    const t: DriverTransport = {
      kind: 'https',
      send: async () =>
        step({
          state: 'failed',
          command: './deploy.sh',
          workflow: null,
          deployment: null,
          detail: 'GitHub made no deployment to staging: Conflict (409)',
        }),
    };
    const { d } = driver(t);
    const stop = await stopOf(d.deploy('dr-1', 'staging'));
    expect([stop.exitCode, stop.refusal.message]).toEqual([
      EXIT.deployFailed,
      'Deploy stage staging of run dr-1 failed: GitHub made no deployment to staging: Conflict (409)',
    ]);
  });

  it("reads every answer by its route's schema: one it cannot read stops it with answer_unreadable, naming the route and the field", async () => {
    const t: DriverTransport = { kind: 'https', send: async () => ok({ state: 'exploded', command: null }) };
    const { d } = driver(t);
    const stop = await stopOf(d.deploy('dr-1', 'staging'));
    expect([stop.exitCode, stop.refusal.code]).toEqual([EXIT.refused, 'answer_unreadable']);
    expect(stop.refusal.message).toMatch(
      /^yoke's answer to POST \/yoke\/api\/deployment-runs\/:run\/stages\/:stage\/deploy is not one this CLI reads: state: /,
    );
  });
});
