import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/main.js';
import type { DeploymentView } from '../../src/delivery/runs/view.js';
import { DEMO_ENGINE_CONFIG, DEMO_REPO, MAINTAINER } from '../../sandbox/demo-repo.js';
import type { Sandbox } from '../../sandbox/sandbox.js';
import { startDeliverySandbox, type DeliverySandbox } from '../helpers/delivery-sandbox.js';
import { unclaimedWarnings } from '../helpers/sandbox-log.js';

/** Warnings the tests below provoke, each asserted where it is. */
const CLAIMED_WARNINGS: string[] = [];

// Delivery end to end over real HTTP: three items merged by the demo agents,
// one plan attached by one item and one by two, a deployment run at the merge
// commit, QA through the CLI in a checkout of the pinned commit, and a shared
// case that fails once and is retried.

const FILES = {
  '.github/yoke.yml': `${DEMO_ENGINE_CONFIG}delivery:
  stages:
    - { name: staging, kind: deploy, command: 'echo "$YOKE_COMMIT" > .deployed-$YOKE_STAGE' }
    - { name: staging-qa, kind: qa }
    - { name: production, kind: deploy, command: 'echo "$YOKE_COMMIT" > .deployed-$YOKE_STAGE' }
  steering: ${MAINTAINER}
`,
  '.github/yoke/qa/checkout.yml':
    'name: checkout\ncases:\n  - {id: deployed, title: Staging runs the pinned commit, run: \'test "$(cat .deployed-staging)" = "$YOKE_COMMIT"\'}\n  - {id: looks-right, title: Greeting reads well, manual: true, review: independent}\n',
  '.github/yoke/qa/smoke.yml':
    'name: smoke\ncases:\n  - {id: tests, title: Tests pass, run: node test/run.js}\n  - {id: flaky, title: Flaky on first try, run: \'test -f .flaky-tried || { touch .flaky-tried; echo "first try fails"; exit 1; }\'}\n',
};

let ds: DeliverySandbox;
let sandbox: Sandbox;
let checkout: string;
const yoke = (args: string[], as?: string) => ds.yoke(args, as);

async function forgeApi(token: string, method: string, path: string, body: unknown): Promise<void> {
  const res = await fetch(`${sandbox.forge.url}/api/v3/repos/${DEMO_REPO}${path}`, {
    method,
    headers: { authorization: `token ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status}`);
}

beforeAll(async () => {
  ds = await startDeliverySandbox(FILES, async (s) => {
    sandbox = s;
    // Attach: a label on DEMO-1, `/yoke qa attach` on DEMO-2 and DEMO-3.
    await forgeApi(s.maintainerToken, 'POST', '/issues/1/labels', { labels: ['qa:checkout'] });
    await s.comment(2, '/yoke qa attach smoke');
    await s.comment(3, '/yoke qa attach smoke');
  });
  ({ sandbox, checkout } = ds);
}, 200_000);

afterAll(async () => {
  await ds?.stop();
});

describe('delivery over real HTTP', () => {
  it('takes three merged items through staging, scoped QA and production', async () => {
    const head = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: checkout, encoding: 'utf8' }).trim();
    const created = await yoke(['deployment-runs', 'create', DEMO_REPO, '--commit', head, '--json']);
    expect(created.err).toBe('');
    const run = JSON.parse(created.out) as DeploymentView;
    // Each attachment was answered where it was made.
    expect(
      sandbox.repo.comments
        .filter((c) => c.body.startsWith('@maintainer Attached QA plan'))
        .map((c) => [c.issueNumber, c.body.split('`')[1]])
        .sort(),
    ).toEqual([
      [1, 'checkout'],
      [2, 'smoke'],
      [3, 'smoke'],
    ]);
    expect(run.members.map((m) => m.item).sort()).toEqual(['DEMO-1', 'DEMO-2', 'DEMO-3']);
    expect(sandbox.repo.issues.get(run.trackingIssue!)!.labels).toEqual(['yoke:deploy']);

    expect((await yoke(['deploy', 'stage', 'run', run.id, 'staging'])).out).toContain(
      'staging succeeded; the run is at staging-qa',
    );

    // DEMO-1 owns checkout: its holder runs it (the manual case is recorded with evidence); DEMO-2 and DEMO-3 share smoke.
    const gate = await yoke(['deployment-runs', 'dispatch', run.id, 'staging-qa', '--json']);
    const answer = JSON.parse(gate.out);
    expect(answer.woken.map((w: { subject: string }) => w.subject)).toEqual(['DEMO-1']);
    expect(answer.groups.map((g: { planId: string; covered: string[] }) => [g.planId, g.covered])).toEqual([
      ['smoke', ['DEMO-2', 'DEMO-3']],
    ]);

    expect((await yoke(['qa', 'plan', 'run', '--item', 'DEMO-1', '--stage', 'staging-qa'])).out).toContain(
      'DEMO-1 checkout/deployed: pass',
    );
    expect(
      (
        await yoke(
          [
            'qa',
            'case',
            'run',
            '--item',
            'DEMO-1',
            '--stage',
            'staging-qa',
            '--case',
            'looks-right',
            '--verdict',
            'pass',
            '--evidence',
            'Read "Hello, yoke" on staging.',
          ],
          MAINTAINER,
        )
      ).code,
    ).toBe(0);

    const first = await yoke([
      'qa',
      'plan',
      'run',
      '--deployment-run-id',
      run.id,
      '--stage',
      'staging-qa',
      '--plan',
      'smoke',
    ]);
    expect([first.code, first.out]).toEqual([1, `${run.id}-g1 smoke/tests: pass\n${run.id}-g1 smoke/flaky: fail`]);
    const failed = JSON.parse((await yoke(['deployment-runs', 'dispatch', run.id, 'staging-qa', '--json'])).out);
    expect(failed.state).toBe('failed');
    expect(failed.triage[0].retry).toBe(
      `git checkout ${head} && yoke qa plan run --deployment-run-id ${run.id} --stage staging-qa --plan smoke`,
    );
    const retry = await yoke([
      'qa',
      'plan',
      'run',
      '--deployment-run-id',
      run.id,
      '--stage',
      'staging-qa',
      '--plan',
      'smoke',
    ]);
    expect([retry.code, retry.out]).toEqual([0, `${run.id}-g1 smoke/flaky: pass`]);

    // QA04: DEMO-1 still waits on an independent review of its claim PR; a second maintainer approves.
    const waiting = JSON.parse((await yoke(['deployment-runs', 'dispatch', run.id, 'staging-qa', '--json'])).out);
    expect(waiting.waits.map((w: { code: string }) => w.code)).toEqual(['review_pending']);
    const pr = [...sandbox.repo.issues.values()].find((i) => i.pull && i.body.includes('Closes #1'))!;
    await forgeApi(sandbox.forge.personalToken('second-maintainer'), 'POST', `/pulls/${pr.number}/reviews`, {
      event: 'APPROVE',
      body: 'Looks right.',
    });
    const settled = JSON.parse((await yoke(['deployment-runs', 'dispatch', run.id, 'staging-qa', '--json'])).out);
    expect([settled.state, settled.nextStage]).toEqual(['settled', 'production']);

    expect((await yoke(['deploy', 'stage', 'run', run.id, 'production'])).out).toContain(
      'production succeeded; the run is through its last stage',
    );
    const got = await yoke(['deployment-runs', 'get', run.id]);
    expect(got.out).toContain(`${run.id} · ${DEMO_REPO} at ${head.slice(0, 12)} · succeeded`);
    for (const item of ['DEMO-1', 'DEMO-2', 'DEMO-3'])
      expect(got.out).toMatch(new RegExp(`  ${item} \\(#\\d, PR #\\d+\\): staging-qa settled`));
    expect(got.out).toContain(
      `  staging-qa ${run.id}-g1 smoke/flaky: fail (yoke qa plan run, operator)\n  staging-qa ${run.id}-g1 smoke/flaky: pass (yoke qa plan run, operator)`,
    );
    expect(readFileSync(join(checkout, '.deployed-production'), 'utf8').trim()).toBe(head);
    // DP01: the command stages are GitHub deployments too, each written by yoke from start to end.
    const deployed = sandbox.forge.deployments.deployments
      .filter((d) => d.repo === DEMO_REPO)
      .map((d) => [d.environment, d.sha, d.creator.login, d.statuses.map((st) => st.state).reverse()]);
    expect(deployed).toEqual([
      ['staging', head, 'yoke-sandbox[bot]', ['in_progress', 'success']],
      ['production', head, 'yoke-sandbox[bot]', ['in_progress', 'success']],
    ]);
    // The tracking issue shows where the run ended.
    expect(sandbox.repo.issues.get(run.trackingIssue!)!.body).toContain('**Status:** succeeded');

    // The database door reaches the same run through yoke's own code in-process, against the SQLite file and the forge.
    const err: string[] = [];
    const out: string[] = [];
    const door = await runCli(['watch', 'deploy', '--db', join(sandbox.dataDir, 'yoke.db'), '--', run.id], {
      out: (l) => out.push(l),
      err: (l) => err.push(l),
      env: sandbox.doorEnv(),
      fetch,
    });
    expect([door, out, err]).toEqual([
      1,
      [],
      [
        `Deployment run ${run.id} has succeeded; only an active run moves.\nTo recover: See \`yoke deployment-runs get ${run.id}\`; start a new run with \`yoke deployment-runs create\` if work is left.`,
      ],
    ]);
  });
});

describe('what yoke logged here', () => {
  it('holds no warning or error that no test here claimed', () => {
    expect(unclaimedWarnings(ds?.sandbox, CLAIMED_WARNINGS)).toEqual([]);
  });
});
