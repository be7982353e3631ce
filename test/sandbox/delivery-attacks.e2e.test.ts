import { execFile, execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkoutIo } from '../../src/cli/exec.js';
import { runCli } from '../../src/cli/main.js';
import type { DeploymentView } from '../../src/delivery/runs/view.js';
import { DEMO_AGENT, DEMO_ENGINE_CONFIG, DEMO_REPO, MAINTAINER, ONLOOKER, REVIEWER } from '../../sandbox/demo-repo.js';
import type { Sandbox } from '../../sandbox/sandbox.js';
import { startDeliverySandbox, type DeliverySandbox } from '../helpers/delivery-sandbox.js';
import { TEST_CLI } from '../helpers/bundles-global.js';
import { unclaimedWarnings } from '../helpers/sandbox-log.js';

/** Warnings the tests below provoke, each asserted where it is. */
const CLAIMED_WARNINGS: string[] = [];

// The delivery half read as an attacker, over real HTTP against the sandbox:
// a merged QA case that prints the CLI's environment, a correction nobody
// declared, a writer waiving their own failure or speaking as the
// maintainer, and a triage user's qa: label. Each is refused where it enters.

const FILES = {
  '.github/yoke.yml': `${DEMO_ENGINE_CONFIG}delivery:
  stages:
    - { name: staging, kind: deploy, command: 'true' }
    - { name: staging-qa, kind: qa }
    - { name: production, kind: deploy, command: 'true' }
  steering: ${MAINTAINER}
`,
  // A merged PR changed a case into one that prints what its environment holds.
  '.github/yoke/qa/checkout.yml':
    "name: checkout\ncases:\n  - {id: leaky, title: Prints its environment, run: 'echo \"token=$YOKE_TOKEN key=$PRIVATE_KEY url=$YOKE_URL\"'}\n  - {id: flaky, title: Fails, run: 'exit 1'}\n  - {id: health, title: Passes, run: 'true'}\n",
  '.github/yoke/qa/reviewed.yml':
    "name: reviewed\ncases:\n  - {id: works, title: It works, run: 'true', review: independent}\n",
};

const OPERATOR_SECRET = 'sandbox-operator-token-0123456789abcdef';
const FAKE_KEY =
  '-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAfakefakefakefakefakefakefake\n-----END RSA PRIVATE KEY-----';

let ds: DeliverySandbox;
let sandbox: Sandbox;
let run: DeploymentView;

/** The CLI in the checkout, in this process, as `login` or with the operator token. */
async function yokeWith(args: string[], token: string) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(
    args,
    checkoutIo(
      ds.checkout,
      { YOKE_URL: sandbox.yokeUrl, YOKE_TOKEN: token },
      (l) => out.push(l),
      (l) => err.push(l),
    ),
  );
  return { code, out: out.join('\n'), err: err.join('\n') };
}

/**
 * The real CLI as a child process (built once for the run: helpers/bundles-global.ts), as a person's shell runs it, with `env` in its real environment
 * (asynchronously: yoke answers from this very process).
 */
const childCli = (args: string[], env: Record<string, string>) =>
  new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
    const uncontained = process.env.YOKE_COMMANDS_UNCONTAINED
      ? { YOKE_COMMANDS_UNCONTAINED: process.env.YOKE_COMMANDS_UNCONTAINED }
      : {};
    execFile(
      process.execPath,
      [TEST_CLI, ...args],
      {
        cwd: ds.checkout,
        encoding: 'utf8',
        timeout: 60_000,
        env: {
          PATH: process.env.PATH ?? '/usr/bin:/bin',
          HOME: ds.checkout,
          YOKE_URL: sandbox.yokeUrl,
          ...uncontained,
          ...env,
        },
      },
      (error, out, stderr) => {
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, out: out.trim(), err: stderr });
      },
    );
  });

const api = async (method: string, path: string, token: string, body?: unknown) => {
  const res = await fetch(`${sandbox.yokeUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as { error?: { code: string; message: string } } };
};

beforeAll(async () => {
  ds = await startDeliverySandbox(
    FILES,
    async (s) => {
      sandbox = s;
      await s.comment(1, '/yoke qa attach checkout');
      await s.comment(2, '/yoke qa attach reviewed');
    },
    2,
  );
  sandbox = ds.sandbox;
  const created = await ds.yoke(['deployment-runs', 'create', DEMO_REPO, '--json']);
  run = JSON.parse(created.out) as DeploymentView;
  await ds.yoke(['deploy', 'stage', 'run', run.id, 'staging']);
  await ds.yoke(['deployment-runs', 'dispatch', run.id, 'staging-qa']);
}, 240_000);

afterAll(async () => {
  await ds?.stop();
});

describe('the delivery attack suite, end to end', () => {
  it("TR06 a QA case that prints the CLI's environment records neither the operator token nor the app key as evidence", async () => {
    // The CLI's own process holds both in its real environment, as an operator's shell would.
    const r = await childCli(['qa', 'plan', 'run', '--item', 'DEMO-1', '--stage', 'staging-qa'], {
      YOKE_TOKEN: OPERATOR_SECRET,
      PRIVATE_KEY: FAKE_KEY,
    });
    expect(r.out.split('\n')).toEqual([
      'DEMO-1 checkout/leaky: pass',
      'DEMO-1 checkout/flaky: fail',
      'DEMO-1 checkout/health: pass',
    ]);
    const evidence = (await sandbox.runtime.store.qa.verdicts([run.id])).find((v) => v.caseId === 'leaky')!.evidence!;
    expect(evidence).toContain('token= key= url=');
    for (const secret of [OPERATOR_SECRET, 'MIIEowIBAAKCAQEA', sandbox.yokeUrl]) expect(evidence).not.toContain(secret);
  });

  it('TR10 a correction the plan does not declare discharges nothing: the failed case still holds the member', async () => {
    const r = await yokeWith(
      ['qa', 'case', 'run', '--item', 'DEMO-1', '--stage', 'staging-qa', '--case', 'health', '--replaces', 'flaky'],
      OPERATOR_SECRET,
    );
    expect(r.code).toBe(1);
    expect(r.err.split('\n')[0]).toBe(
      "Plan checkout at the run's pinned commit does not declare health as the replacement of flaky, so its verdict cannot take flaky's place.",
    );
    const view = JSON.parse((await ds.yoke(['deployment-runs', 'get', run.id, '--json'])).out) as DeploymentView;
    expect(view.members.find((m) => m.item === 'DEMO-1')!.stages['staging-qa']).toBe('waiting');
  });

  it("TR11 a writer cannot waive their own failing case or take a member out, nor can any token speak as the maintainer; the maintainer's own token can", async () => {
    const waive = [
      'qa',
      'waive',
      '--deployment-run-id',
      run.id,
      '--stage',
      'staging-qa',
      '--item',
      'DEMO-1',
      '--plan',
      'checkout',
      '--case',
      'flaky',
      '--reason',
      'it is flaky, trust me',
    ];
    const mine = await yokeWith(waive, sandbox.personToken(DEMO_AGENT));
    expect([mine.code, mine.err.split('\n')[0]]).toEqual([
      1,
      `Waiving a QA case on ${DEMO_REPO} needs maintain access or more; GitHub says ${DEMO_AGENT}'s is write.`,
    ]);
    const remove = await api(
      'POST',
      `/yoke/api/deployment-runs/${run.id}/members/DEMO-1/remove`,
      sandbox.personToken(DEMO_AGENT),
      { reason: 'in the way' },
    );
    expect([remove.status, remove.json.error?.code]).toEqual([403, 'permission_required']);
    const asOperator = await yokeWith(waive, OPERATOR_SECRET);
    expect([asOperator.code, asOperator.err.split('\n')[0]]).toEqual([
      1,
      `Waiving case flaky on ${DEMO_REPO} is a person's decision, and this request carries an operator token, which names nobody.`,
    ]);
    const named = await api(
      'POST',
      `/yoke/api/deployment-runs/${run.id}/stages/staging-qa/verdicts`,
      sandbox.personToken(DEMO_AGENT),
      { item: 'DEMO-1', case: 'flaky', result: 'pass', evidence: 'ok', by: MAINTAINER },
    );
    expect([named.status, named.json.error?.code]).toEqual([403, 'identity_not_yours']);
    expect(
      (await sandbox.runtime.store.qa.verdicts([run.id])).filter(
        (v) => v.result === 'waived' || v.recordedBy === MAINTAINER,
      ),
    ).toEqual([]);
    const theirs = await yokeWith(waive, sandbox.personToken(MAINTAINER));
    expect(theirs.code).toBe(0);
    expect(
      (await sandbox.runtime.store.qa.verdicts([run.id]))
        .filter((v) => v.result === 'waived')
        .map((v) => [v.caseId, v.recordedBy]),
    ).toEqual([['flaky', MAINTAINER]]);
  });

  it('TR25 a read-only person token, through the real CLI as a child process, is refused on every route that acts: create, deploy, record, gate-check, drive, start, reset, auto', async () => {
    // A child process, as a person's shell runs it (asynchronously: yoke answers from this very process).
    const cli = async (args: string[]) => {
      const r = await childCli(args, { YOKE_TOKEN: sandbox.personToken(ONLOOKER), YOKE_LOGIN: ONLOOKER });
      return { code: r.code, err: r.err.split('\n')[0] ?? '' };
    };
    const runs = (await sandbox.runtime.store.deploymentRuns.list()).length;
    const verdicts = (await sandbox.runtime.store.qa.verdicts([run.id])).length;
    const needs = (what: string, need = 'write') =>
      `${what} on ${DEMO_REPO} needs ${need} access or more; GitHub says ${ONLOOKER}'s is read.`;
    const tries: [string[], string][] = [
      [['deployment-runs', 'create', DEMO_REPO], needs('Creating a deployment run')],
      [['deploy', 'stage', 'run', run.id, 'production'], needs('Reporting a deploy stage')],
      [
        [
          'qa',
          'case',
          'run',
          '--deployment-run-id',
          run.id,
          '--item',
          'DEMO-1',
          '--stage',
          'staging-qa',
          '--case',
          'health',
        ],
        needs('Recording a QA verdict'),
      ],
      [['deployment-runs', 'dispatch', run.id, 'staging-qa'], needs('Gate-checking a stage')],
      [['watch', 'deploy', '--driver', ONLOOKER, '--', run.id], needs('Driving a deployment run')],
      [['repo', 'start', DEMO_REPO, '1'], needs('Starting work on an issue')],
      [['repo', 'reset', DEMO_REPO], needs('Resetting a repository')],
      [['repo', 'auto', DEMO_REPO, 'off'], needs('Switching the auto loop')],
      [
        [
          'qa',
          'waive',
          '--deployment-run-id',
          run.id,
          '--stage',
          'staging-qa',
          '--item',
          'DEMO-1',
          '--plan',
          'checkout',
          '--case',
          'flaky',
          '--reason',
          'x',
        ],
        needs('Waiving a QA case', 'maintain'),
      ],
    ];
    const got = [];
    for (const [args] of tries) got.push(await cli(args));
    expect(got.map((g) => g.code !== 0)).toEqual(tries.map(() => true));
    expect(got.map((g) => g.err)).toEqual(tries.map(([, said]) => said));
    expect((await sandbox.runtime.store.deploymentRuns.list()).length).toBe(runs);
    expect((await sandbox.runtime.store.qa.verdicts([run.id])).length).toBe(verdicts);
    // What the onlooker may do, they can: read the repository's status.
    expect((await cli(['repo', 'status', DEMO_REPO])).code).toBe(0);
  }, 60_000);

  it("TR29 a deployment run pinned at a branch's commit, whose plans weaken every case, is refused: the gate is the default branch's", async () => {
    const git = (args: string[]) => execFileSync('git', args, { cwd: ds.checkout, encoding: 'utf8' }).trim();
    git(['checkout', '-q', '-b', 'weaker']);
    writeFileSync(
      join(ds.checkout, '.github/yoke/qa/checkout.yml'),
      "name: checkout\ncases:\n  - {id: flaky, title: Fails, run: 'true'}\n",
    );
    git(['-c', 'user.name=mallory', '-c', 'user.email=m@example.invalid', 'commit', '-qam', 'Every case passes now']);
    const sha = git(['rev-parse', 'HEAD']);
    git(['push', '-q', sandbox.repo.gitDir, 'HEAD:refs/heads/weaker']);
    git(['checkout', '-q', '-']);
    const runs = (await sandbox.runtime.store.deploymentRuns.list()).length;
    const r = await yokeWith(['deployment-runs', 'create', DEMO_REPO, '--commit', sha], OPERATOR_SECRET);
    expect([r.code, r.err.split('\n')[0]]).toEqual([
      1,
      `${sha.slice(0, 12)} is not on ${DEMO_REPO}'s default branch: a deployment run's QA plans are read at its pinned commit, so it must be one the repository's maintainers merged.`,
    ]);
    expect((await sandbox.runtime.store.deploymentRuns.list()).length).toBe(runs);
  });

  it('TR09 an approval by someone without write access, or by a bot, is not the independent review; a maintainer who is none of author, holder or assignee settles it', async () => {
    expect(
      (await yokeWith(['qa', 'plan', 'run', '--item', 'DEMO-2', '--stage', 'staging-qa'], OPERATOR_SECRET)).out,
    ).toBe('DEMO-2 reviewed/works: pass');
    const pr = [...sandbox.repo.issues.values()].find((i) => i.pull && i.body.includes('Closes #2'))!;
    const approve = (token: string) =>
      fetch(`${sandbox.forge.url}/api/v3/repos/${DEMO_REPO}/pulls/${pr.number}/reviews`, {
        method: 'POST',
        headers: { authorization: `token ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ event: 'APPROVE', body: 'LGTM' }),
      });
    const stateOf = async () => {
      await ds.yoke(['deployment-runs', 'dispatch', run.id, 'staging-qa']);
      const view = JSON.parse((await ds.yoke(['deployment-runs', 'get', run.id, '--json'])).out) as DeploymentView;
      return view.members.find((m) => m.item === 'DEMO-2')!.stages['staging-qa'];
    };
    // A sock puppet: anyone on a public repository can approve.
    expect((await approve(sandbox.forge.personalToken('sock-puppet'))).status).toBe(200);
    expect(await stateOf()).toBe('waiting');
    expect((await approve(sandbox.forge.personalToken('helper[bot]'))).status).toBe(200);
    expect(await stateOf()).toBe('waiting');
    expect((await approve(sandbox.forge.personalToken(REVIEWER))).status).toBe(200);
    expect(await stateOf()).toBe('settled');
  });

  it("TR05 a triage user's qa: label attaches nothing, and yoke writes nothing in answer", async () => {
    sandbox.repo.collaborators.tria = 'triage';
    const before = sandbox.repo.comments.length;
    const res = await fetch(`${sandbox.forge.url}/api/v3/repos/${DEMO_REPO}/issues/2/labels`, {
      method: 'POST',
      headers: { authorization: `token ${sandbox.forge.personalToken('tria')}`, 'content-type': 'application/json' },
      body: JSON.stringify({ labels: ['qa:checkout'] }),
    });
    expect(res.status).toBe(200);
    // A few ticks: the webhook and the poll both had their chance.
    await new Promise((r) => setTimeout(r, 3000));
    expect(
      (await sandbox.runtime.store.qa.attachments(DEMO_REPO)).map((a) => [a.issueNumber, a.planId]).sort(),
    ).toEqual([
      [1, 'checkout'],
      [2, 'reviewed'],
    ]);
    expect(sandbox.repo.comments.slice(before)).toEqual([]);
  });
});

describe('what yoke logged here', () => {
  it('holds no warning or error that no test here claimed', () => {
    expect(unclaimedWarnings(ds?.sandbox, CLAIMED_WARNINGS)).toEqual([]);
  });
});
