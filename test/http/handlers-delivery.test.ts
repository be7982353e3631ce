import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/main.js';
import { startApi } from '../helpers/api-server.js';
import { REPO, makeDeliveryHarness } from '../helpers/delivery.js';
import { liveRun } from '../helpers/run-api.js';

let close: (() => Promise<void>) | null = null;
afterEach(async () => {
  await close?.();
  close = null;
});

/** TR11: person tokens: alice writes, maint maintains, mallory only reads. */
const PEOPLE = [
  { login: 'alice', token: 'alice-token' },
  { login: 'maint', token: 'maint-token' },
  { login: 'mallory', token: 'mallory-token' },
];

async function setup() {
  const h = await makeDeliveryHarness({ config: { delivery: { stages: [{ name: 'qa', kind: 'qa' }] } } });
  await h.attach(1, 'checkout');
  const api = await startApi(h, { tokens: ['op-token'], people: PEOPLE });
  close = api.close;
  const call = async (
    method: string,
    path: string,
    body?: unknown,
    token: string | null = 'op-token',
    headers: Record<string, string> = {},
  ) => {
    const res = await fetch(`${api.url}${path}`, {
      method,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        'content-type': 'application/json',
        ...headers,
      },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    return { status: res.status, json: (await res.json()) as any };
  };
  return { h, api, call };
}

describe('the deployment-run API', () => {
  it('creates, reads and gate-checks a run for operators; nobody else can create a run or record a verdict', async () => {
    const { h, call } = await setup();
    const created = await call('POST', '/yoke/api/deployment-runs', { repo: REPO });
    expect(created.status).toBe(201);
    const id = created.json.id as string;
    expect(
      (await call('GET', `/yoke/api/deployment-runs/${id}`)).json.members.map((m: { item: string }) => m.item),
    ).toEqual(['APP-1', 'APP-2', 'APP-3']);
    const strangers = [
      await call('POST', '/yoke/api/deployment-runs', { repo: REPO }, null),
      await call(
        'POST',
        `/yoke/api/deployment-runs/${id}/stages/qa/verdicts`,
        { item: 'APP-1', case: 'cart', result: 'pass' },
        'not-a-token',
      ),
      await call(
        'POST',
        `/yoke/api/deployment-runs/${id}/stages/qa/waive`,
        { plan: 'checkout', case: 'cart', reason: 'x' },
        null,
      ),
      await call('POST', `/yoke/api/deployment-runs/${id}/stages/qa/dispatch`, undefined, null),
      await call('GET', `/yoke/api/deployment-runs/${id}`, undefined, null),
    ];
    expect(strangers.map((r) => [r.status, r.json.error.code])).toEqual(Array(5).fill([401, 'unauthorized']));
    // TR25: a person token whose login may only read is refused too.
    h.forge.repo(REPO).permissions.mallory = 'read';
    const reader = [
      await call('POST', '/yoke/api/deployment-runs', { repo: REPO }, 'mallory-token'),
      await call(
        'POST',
        `/yoke/api/deployment-runs/${id}/stages/qa/verdicts`,
        { item: 'APP-1', case: 'cart', result: 'pass' },
        'mallory-token',
      ),
      await call(
        'POST',
        `/yoke/api/deployment-runs/${id}/stages/qa/dispatch`,
        { driver: 'mallory', stage: 'qa', commit: created.json.commit },
        'mallory-token',
        { 'idempotency-key': 'gate-check-0002' },
      ),
    ];
    expect(reader.map((r) => [r.status, r.json.error.code])).toEqual(Array(3).fill([403, 'permission_required']));
    expect(await h.store.qa.verdicts([id])).toEqual([]);
    expect(await h.store.deploymentRuns.list()).toHaveLength(1);
    const dispatched = await call(
      'POST',
      `/yoke/api/deployment-runs/${id}/stages/qa/dispatch`,
      { driver: 'op', stage: 'qa', commit: created.json.commit },
      'op-token',
      { 'idempotency-key': 'gate-check-0001' },
    );
    expect([
      dispatched.status,
      dispatched.json.state,
      dispatched.json.woken.map((w: { subject: string }) => w.subject),
    ]).toEqual([200, 'waiting', ['APP-1']]);
  });

  it('refuses malformed bodies with the fields to fix, and unknown runs and routes', async () => {
    const { call } = await setup();
    expect(await call('POST', '/yoke/api/deployment-runs', { repo: 'acme', items: 'APP-1' })).toEqual({
      status: 400,
      json: {
        error: {
          code: 'validation_failed',
          message:
            'The request body is not valid: repo: repo is owner/name; items: Invalid input: expected array, received string',
          recovery: 'Fix the fields named above and send the request again.',
        },
      },
    });
    expect((await call('POST', '/yoke/api/deployment-runs', '{not json')).json.error.message).toBe(
      'The request body is not valid: the body is not JSON',
    );
    expect(
      (await call('POST', '/yoke/api/deployment-runs/dr-x/stages/qa/verdicts', { case: 'cart', result: 'pass' })).json
        .error.message,
    ).toBe('The request body is not valid: body: name the item (--item) or, for a shared plan, the plan (--plan)');
    expect((await call('GET', '/yoke/api/deployment-runs/dr-x')).json.error.code).toBe('deployment_run_unknown');
    expect((await call('POST', '/yoke/api/deployment-runs/dr-x/stages/qa/nothing')).json.error.code).toBe('not_found');
  });
});

describe('TR11 token roles', () => {
  const codes = (r: { status: number; json: any }) => [r.status, r.json.error?.code ?? 'ok'];

  it('TR11 who is recorded comes from the token: an operator or a person naming someone else is refused, and each records as itself', async () => {
    const { h, call } = await setup();
    h.forge.repo(REPO).permissions.mallory = 'read';
    const id = (await call('POST', '/yoke/api/deployment-runs', { repo: REPO })).json.id as string;
    const verdicts = `/yoke/api/deployment-runs/${id}/stages/qa/verdicts`;
    const cart = { item: 'APP-1', case: 'cart', result: 'pass', evidence: 'ok' };
    expect(codes(await call('POST', verdicts, { ...cart, by: 'alice' }))).toEqual([403, 'identity_not_yours']);
    const named = await call('POST', verdicts, { ...cart, by: 'maint' }, 'alice-token');
    expect(named.json.error).toEqual({
      code: 'identity_not_yours',
      message: 'This token may not record as maint: who recorded a verdict comes from the token, not the request.',
      recovery: "Leave `by` out (it records as alice), or send the request with maint's own token.",
    });
    expect(await h.store.qa.verdicts([id])).toEqual([]);
    expect(codes(await call('POST', verdicts, cart, 'alice-token'))).toEqual([201, 'ok']);
    expect(codes(await call('POST', verdicts, { ...cart, result: 'fail' }))).toEqual([201, 'ok']);
    expect((await h.store.qa.verdicts([id])).map((v) => [v.caseId, v.result, v.recordedBy])).toEqual([
      ['cart', 'pass', 'alice'],
      ['cart', 'fail', 'operator'],
    ]);
  });

  it('TR25 a person creates and drives a deployment run as themselves: naming another creator or driver is refused', async () => {
    const { h, call } = await setup();
    const other = await call('POST', '/yoke/api/deployment-runs', { repo: REPO, creator: 'maint' }, 'alice-token');
    expect(other.json.error).toEqual({
      code: 'identity_field_not_yours',
      message: 'This token may not name maint as the creator: who that is comes from the token, not the request.',
      recovery: "Leave `creator` out (it is alice), or send the request with maint's own token.",
    });
    expect(await h.store.deploymentRuns.list()).toEqual([]);
    const created = await call('POST', '/yoke/api/deployment-runs', { repo: REPO }, 'alice-token');
    expect(created.status).toBe(201);
    expect((await h.store.deploymentRuns.get(created.json.id))?.creator).toBe('alice');
    expect(
      codes(
        await call('POST', `/yoke/api/deployment-runs/${created.json.id}/checkin`, { driver: 'maint' }, 'alice-token'),
      ),
    ).toEqual([403, 'identity_field_not_yours']);
    expect(
      codes(
        await call('POST', `/yoke/api/deployment-runs/${created.json.id}/checkin`, { driver: 'alice' }, 'alice-token'),
      ),
    ).toEqual([200, 'ok']);
  });

  it("TR11 a manual case is a writer's approval; a waiver and a removal are a maintainer's, each with their own token", async () => {
    const { h, call } = await setup();
    h.forge.repo(REPO).permissions.mallory = 'read';
    const id = (await call('POST', '/yoke/api/deployment-runs', { repo: REPO })).json.id as string;
    const stage = `/yoke/api/deployment-runs/${id}/stages/qa`;
    const manual = { item: 'APP-1', case: 'looks-right', result: 'pass', evidence: 'screenshot' };
    expect(codes(await call('POST', `${stage}/verdicts`, manual))).toEqual([403, 'person_token_required']);
    const reader = await call('POST', `${stage}/verdicts`, manual, 'mallory-token');
    // TR25: the route's role is checked first, against what GitHub says of the login now.
    expect(reader.json.error).toEqual({
      code: 'permission_required',
      message: "Recording a QA verdict on acme/api needs write access or more; GitHub says mallory's is read.",
      recovery:
        'Ask someone with write access to acme/api to do it with their own token, or ask an admin of acme/api to give mallory write access.',
    });
    const waive = { item: 'APP-1', plan: 'checkout', case: 'cart', reason: 'covered by the e2e suite' };
    // An operator token names nobody: the recovery names the person's own token, and the comment that waives.
    expect((await call('POST', `${stage}/waive`, waive)).json.error).toEqual({
      code: 'person_token_required',
      message:
        "Waiving case cart on acme/api is a person's decision, and this request carries an operator token, which names nobody.",
      recovery:
        'Run the same command with your own token from YOKE_PERSON_TOKENS (login:token) as YOKE_TOKEN, or comment `/yoke qa waive cart --plan checkout --reason "why"` on the deployment run\'s tracking issue.',
    });
    const writer = await call('POST', `${stage}/waive`, waive, 'alice-token');
    expect(writer.json.error).toEqual({
      code: 'permission_required',
      message: "Waiving a QA case on acme/api needs maintain access or more; GitHub says alice's is write.",
      recovery:
        'Ask someone with maintain access to acme/api to do it with their own token, or ask an admin of acme/api to give alice maintain access.',
    });
    const remove = `/yoke/api/deployment-runs/${id}/members/APP-2/remove`;
    expect(codes(await call('POST', remove, { reason: 'needs a fix' }))).toEqual([403, 'person_token_required']);
    expect(codes(await call('POST', remove, { reason: 'needs a fix' }, 'mallory-token'))).toEqual([
      403,
      'permission_required',
    ]);
    // A body may no longer say who removed it.
    expect(codes(await call('POST', remove, { reason: 'needs a fix', by: 'maint' }))).toEqual([
      400,
      'validation_failed',
    ]);
    expect(await h.store.qa.verdicts([id])).toEqual([]);
    expect((await h.store.deploymentRuns.members(id)).filter((m) => m.removedAt !== null)).toEqual([]);

    expect(codes(await call('POST', `${stage}/verdicts`, manual, 'alice-token'))).toEqual([201, 'ok']);
    expect(codes(await call('POST', `${stage}/waive`, waive, 'maint-token'))).toEqual([201, 'ok']);
    expect(codes(await call('POST', remove, { reason: 'needs a fix' }, 'maint-token'))).toEqual([200, 'ok']);
    expect((await h.store.qa.verdicts([id])).map((v) => [v.caseId, v.result, v.recordedBy])).toEqual([
      ['looks-right', 'pass', 'alice'],
      ['cart', 'waived', 'maint'],
    ]);
    expect(
      (await h.store.deploymentRuns.members(id))
        .filter((m) => m.removedAt !== null)
        .map((m) => [m.issueNumber, m.removedBy]),
    ).toEqual([[2, 'maint']]);
  });

  it("TR11 a live run's own credential records only the automated QA of the item it holds, and reaches nothing else", async () => {
    const { h, call } = await setup();
    const runId = await liveRun(h, { kind: 'fix', issue: 1, secret: 'fix-run-secret' });
    const id = (await call('POST', '/yoke/api/deployment-runs', { repo: REPO })).json.id as string;
    const stage = `/yoke/api/deployment-runs/${id}/stages/qa`;
    const asRun = (method: string, path: string, body?: unknown, secret = 'fix-run-secret') =>
      call(method, path, body, secret, { 'x-yoke-run': runId });
    expect(codes(await asRun('GET', `${stage}/work?item=APP-1`))).toEqual([200, 'ok']);
    expect((await h.store.qa.memberStages(id, 'qa')).find((m) => m.issueNumber === 1)?.holder).toBe(`run:${runId}`);
    expect(
      codes(
        await asRun(
          'POST',
          `${stage}/verdicts`,
          { item: 'APP-1', case: 'cart', result: 'pass', evidence: 'ok' },
          'a-guess',
        ),
      ),
    ).toEqual([401, 'run_secret_invalid']);
    expect(
      codes(
        await asRun('POST', `${stage}/verdicts`, { item: 'APP-2', case: 'health', result: 'pass', evidence: 'ok' }),
      ),
    ).toEqual([403, 'run_not_holder']);
    expect(
      codes(
        await asRun('POST', `${stage}/verdicts`, {
          item: 'APP-1',
          case: 'looks-right',
          result: 'pass',
          evidence: 'looks fine to me',
        }),
      ),
    ).toEqual([403, 'person_token_required']);
    expect(
      codes(
        await asRun('POST', `${stage}/waive`, { item: 'APP-1', plan: 'checkout', case: 'looks-right', reason: 'x' }),
      ),
    ).toEqual([403, 'run_role_forbidden']);
    expect(codes(await asRun('GET', `/yoke/api/deployment-runs/${id}`))).toEqual([403, 'run_role_forbidden']);
    expect(codes(await asRun('POST', `${stage}/dispatch`, { driver: 'x', stage: 'qa', commit: 'abc1' }))).toEqual([
      403,
      'run_role_forbidden',
    ]);
    expect(codes(await asRun('GET', '/yoke/api/fleet'))).toEqual([403, 'run_role_forbidden']);
    expect(await h.store.qa.verdicts([id])).toEqual([]);
    expect(
      codes(await asRun('POST', `${stage}/verdicts`, { item: 'APP-1', case: 'cart', result: 'pass', evidence: 'ok' })),
    ).toEqual([201, 'ok']);
    expect((await h.store.qa.verdicts([id])).map((v) => [v.caseId, v.recordedBy])).toEqual([['cart', `run:${runId}`]]);
  });
});

describe('the delivery CLI', () => {
  async function cli(
    url: string,
    args: string[],
    over: { head?: string | null; exec?: (c: string) => { code: number; output: string }; token?: string } = {},
  ) {
    const out: string[] = [];
    const err: string[] = [];
    const ran: string[] = [];
    const code = await runCli(args, {
      out: (l) => out.push(l),
      err: (l) => err.push(l),
      env: { YOKE_URL: url, YOKE_TOKEN: over.token ?? 'op-token' },
      fetch,
      head: () => (over.head === undefined ? null : over.head),
      exec: async (command) => {
        ran.push(command);
        return over.exec?.(command) ?? { code: 0, output: 'ok' };
      },
      readFile: () => {
        throw new Error('ENOENT: no such file');
      },
    });
    return { code, out: out.join('\n'), err: err.join('\n'), ran };
  }

  it('runs cases only in a checkout of the pinned commit, and says how to get there (not elsewhere, not outside a checkout)', async () => {
    const { h, api, call } = await setup();
    const id = (await call('POST', '/yoke/api/deployment-runs', { repo: REPO })).json.id as string;
    const commit = (await h.store.deploymentRuns.get(id))!.commit;
    const wrong = await cli(api.url, ['qa', 'plan', 'run', '--item', 'APP-1', '--stage', 'qa'], { head: 'c1' });
    expect([wrong.code, wrong.err, wrong.ran]).toEqual([
      1,
      `This checkout is at c1, but the run is pinned at ${commit}.\nTo recover: git checkout ${commit}`,
      [],
    ]);
    // Outside any checkout: nothing here is the pinned commit, so nothing runs and no verdict is recorded.
    const nowhere = await cli(api.url, ['qa', 'plan', 'run', '--item', 'APP-1', '--stage', 'qa'], { head: null });
    expect([nowhere.code, nowhere.err, nowhere.ran]).toEqual([
      1,
      `This directory is not a git checkout, so nothing here is the run's pinned commit ${commit.slice(0, 12)}.\nTo recover: run it in a clone of the repository, at git checkout ${commit}`,
      [],
    ]);
    expect(await h.store.qa.verdicts([id])).toEqual([]);
    const right = await cli(api.url, ['qa', 'plan', 'run', '--item', 'APP-1', '--stage', 'qa'], { head: commit });
    expect([right.code, right.ran, right.out]).toEqual([
      0,
      ['./qa/cart.sh'],
      'APP-1 checkout/cart: pass\ncheckout/looks-right is manual: yoke qa case run --item APP-1 --stage qa --case looks-right --verdict pass --evidence @FILE',
    ]);
    expect((await h.store.qa.verdicts([id])).map((v) => [v.caseId, v.result, v.source, v.evidence])).toEqual([
      ['cart', 'pass', 'yoke qa plan run', '$ ./qa/cart.sh\nok\n(exit 0)'],
    ]);
  });

  it('refuses a manual verdict without its evidence, or with an unreadable evidence file, and records nothing', async () => {
    const { h, api, call } = await setup();
    const id = (await call('POST', '/yoke/api/deployment-runs', { repo: REPO })).json.id as string;
    const asOperator = await cli(api.url, [
      'qa',
      'case',
      'run',
      '--item',
      'APP-1',
      '--stage',
      'qa',
      '--case',
      'looks-right',
      '--verdict',
      'pass',
      '--evidence',
      'looked',
    ]);
    expect([asOperator.code, asOperator.err]).toEqual([
      1,
      "Recording manual case looks-right on acme/api is a person's decision, and this request carries an operator token, which names nobody.\nTo recover: Run the same command with your own token from YOKE_PERSON_TOKENS (login:token) as YOKE_TOKEN.",
    ]);
    const bare = await cli(
      api.url,
      ['qa', 'case', 'run', '--item', 'APP-1', '--stage', 'qa', '--case', 'looks-right', '--verdict', 'pass'],
      { token: 'alice-token' },
    );
    expect([bare.code, bare.err]).toEqual([
      1,
      'Case looks-right requires evidence with its verdict.\nTo recover: Record it again with evidence: `yoke qa case run --item APP-1 --stage qa --case looks-right --verdict pass --evidence @FILE`.',
    ]);
    const missing = await cli(api.url, [
      'qa',
      'case',
      'run',
      '--item',
      'APP-1',
      '--stage',
      'qa',
      '--case',
      'looks-right',
      '--verdict',
      'pass',
      '--evidence',
      '@shot.txt',
    ]);
    expect([missing.code, missing.err]).toEqual([1, 'Cannot read the evidence file shot.txt: ENOENT: no such file']);
    const odd = await cli(api.url, [
      'qa',
      'case',
      'run',
      '--item',
      'APP-1',
      '--stage',
      'qa',
      '--case',
      'looks-right',
      '--verdict',
      'maybe',
    ]);
    expect([odd.code, odd.err]).toEqual([1, 'Say --verdict pass or --verdict fail.']);
    expect(await h.store.qa.verdicts([id])).toEqual([]);
    const unknown = await cli(api.url, ['qa', 'plan', 'run', '--item', 'APP-9', '--stage', 'qa']);
    expect([unknown.code, unknown.err]).toEqual([
      1,
      'APP-9 is not a member of an active deployment run. See `yoke deployment-runs create`.',
    ]);
  });

  it('prints a run with its stages, members and what it waits on', async () => {
    const { api, call } = await setup();
    const id = (await call('POST', '/yoke/api/deployment-runs', { repo: REPO })).json.id as string;
    const got = await cli(api.url, ['deployment-runs', 'get', id]);
    expect(got.out.split('\n').slice(1)).toEqual([
      'stages:',
      '  > qa (qa): waiting',
      'members:',
      '  APP-1 (#1, PR #101): qa waiting · delivery owed',
      '  APP-2 (#2, PR #102): qa settled · delivery owed',
      '  APP-3 (#3, PR #103): qa settled · delivery owed',
      'waiting on:',
      "  APP-1's plan checkout, case cart (Cart total) has no current pass",
      '    yoke qa plan run --item APP-1 --stage qa',
      "  APP-1's plan checkout, case looks-right (Looks right) has no current pass",
      '    yoke qa case run --item APP-1 --stage qa --case looks-right --verdict pass --evidence @FILE',
      '  APP-1 needs an independent review of its claim PR #101',
      '    Approve PR #101 at its merged head, as someone with write access other than @agent.',
    ]);
  });
});
