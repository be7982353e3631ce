import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeploymentView } from '../../src/delivery/runs/view.js';
import { DEMO_ENGINE_CONFIG, DEMO_REPO, MAINTAINER } from '../../sandbox/demo-repo.js';
import type { Sandbox } from '../../sandbox/sandbox.js';
import { startDeliverySandbox, type DeliverySandbox } from '../helpers/delivery-sandbox.js';
import { unclaimedWarnings } from '../helpers/sandbox-log.js';

/** Warnings the tests below provoke, each asserted where it is. */
const CLAIMED_WARNINGS: string[] = [];

// Notices and close-out end to end over real HTTP: a holder woken on its
// claim PR runs the command it was given; the driver's lease lapses and its
// notice goes to the creator, who declines it to steering; a group closes and
// its notice is withdrawn; a locked issue refuses its close-out, the others
// close, and it closes by itself once unlocked.

const FILES = {
  '.github/yoke.yml': `${DEMO_ENGINE_CONFIG}delivery:
  stages:
    - { name: staging, kind: deploy, command: 'echo "$YOKE_COMMIT" > .deployed-$YOKE_STAGE' }
    - { name: staging-qa, kind: qa }
  steering: steerer
`,
  '.github/yoke/qa/checkout.yml':
    'name: checkout\ncases:\n  - {id: deployed, title: Staging runs the pinned commit, run: \'test "$(cat .deployed-staging)" = "$YOKE_COMMIT"\'}\n',
  '.github/yoke/qa/smoke.yml': 'name: smoke\ncases:\n  - {id: tests, title: Tests pass, run: node test/run.js}\n',
};

let ds: DeliverySandbox;
let sandbox: Sandbox;
const yoke = (args: string[]) => ds.yoke(args);

async function api(base: string, token: string, method: string, path: string, body?: unknown): Promise<Response> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: {
      authorization: `${base.includes('/api/v3') ? 'token' : 'Bearer'} ${token}`,
      'content-type': 'application/json',
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res;
}
const forge = (method: string, path: string, body?: unknown) =>
  api(`${sandbox.forge.url}/api/v3/repos/${DEMO_REPO}`, sandbox.maintainerToken, method, path, body);
const yokeApi = (method: string, path: string, body?: unknown) =>
  api(sandbox.yokeUrl, sandbox.apiToken, method, path, body);

const pullOf = (issue: number) =>
  [...sandbox.repo.issues.values()].find((i) => i.pull && i.body.includes(`Closes #${issue}`))!.number;
const commentsOn = (n: number) => sandbox.repo.comments.filter((c) => c.issueNumber === n);

beforeAll(async () => {
  ds = await startDeliverySandbox(FILES, async (s) => {
    await s.comment(1, '/yoke qa attach checkout');
    await s.comment(2, '/yoke qa attach smoke');
    await s.comment(3, '/yoke qa attach smoke');
  });
  ({ sandbox } = ds);
}, 200_000);

afterAll(async () => {
  await ds?.stop();
});

describe('notices and close-out over real HTTP', () => {
  it('wakes, redelivers, withdraws and closes out, where people look', async () => {
    const run = JSON.parse((await yoke(['deployment-runs', 'create', DEMO_REPO, '--json'])).out) as DeploymentView;
    const tracking = run.trackingIssue!;
    // A lease long enough for the CLI calls below on a loaded machine; the test waits out what is left of it.
    const leaseEnds = Date.now() + 6_000;
    await yokeApi('POST', `/yoke/api/deployment-runs/${run.id}/checkin`, { driver: 'ci-driver', lease_seconds: 6 });
    await yoke(['deploy', 'stage', 'run', run.id, 'staging']);
    // While ci-driver holds the lease, a dispatch is its own.
    expect((await yoke(['deployment-runs', 'dispatch', run.id, 'staging-qa', '--driver', 'ci-driver'])).err).toBe('');

    // The holder of DEMO-1's own plan is told on its claim PR, and runs the command the notice gives.
    const [holderNotice] = commentsOn(pullOf(1)).filter((c) => c.body.includes('is waiting at stage'));
    expect(holderNotice!.body.split('\n')[0]).toBe(
      `@demo-agent deployment run \`${run.id}\` is waiting at stage \`staging-qa\` for DEMO-1.`,
    );
    const command = /`(yoke qa plan run [^`]+)`/.exec(holderNotice!.body)![1]!;
    expect(command).toBe('yoke qa plan run --item DEMO-1 --stage staging-qa');
    expect((await yoke(command.split(' ').slice(1))).code).toBe(0);

    // The shared plan's wait is the driver's; once its lease lapses it goes to the creator, who declines it to steering.
    const groupNotices = () =>
      commentsOn(tracking)
        .filter((c) => c.body.includes(`for ${run.id}-g1.`))
        .map((c) => c.body.split(' deployment run')[0]);
    expect(groupNotices()).toEqual(['driver `ci-driver`']);
    await new Promise((r) => setTimeout(r, Math.max(0, leaseEnds - Date.now()) + 100));
    await yoke(['deployment-runs', 'dispatch', run.id, 'staging-qa']);
    expect(groupNotices()).toEqual(['driver `ci-driver`', `@${MAINTAINER}`]);
    await sandbox.comment(tracking, '/yoke qa decline');
    await sandbox.waitUntil(() => groupNotices().length === 3, 20_000, 'the declined notice to reach steering');
    expect(groupNotices()).toEqual(['driver `ci-driver`', `@${MAINTAINER}`, '@steerer']);
    expect(QA10(run.id)).toEqual([]);

    // Before the stage settles, DEMO-2's issue is locked.
    await forge('PUT', '/issues/2/lock');
    expect(
      (await yoke(['qa', 'plan', 'run', '--deployment-run-id', run.id, '--stage', 'staging-qa', '--plan', 'smoke']))
        .code,
    ).toBe(0);
    // The group closed: steering's notice says it is withdrawn.
    const steering = commentsOn(tracking).find((c) => c.body.startsWith('@steerer'))!;
    expect(steering.body).toBe(
      `@steerer withdrawn: group \`${run.id}-g1\` of deployment run \`${run.id}\` closed, so nothing waits on it any more.`,
    );

    const delivered = (n: number) => commentsOn(pullOf(n)).filter((c) => c.body.includes(`DEMO-${n} is delivered`));
    expect([delivered(1).length, delivered(2).length, delivered(3).length]).toEqual([1, 0, 1]);
    const refused = commentsOn(pullOf(2)).find((c) => c.body.includes('could not be closed out'))!;
    expect(refused.body).toContain(
      '- DEMO-2 was accepted but could not be closed out: issue #2 is locked: `Unlock #2.',
    );
    expect(sandbox.repo.issues.get(2)!.labels).toContain('yoke:delivery-owed');

    await forge('DELETE', '/issues/2/lock');
    await sandbox.waitUntil(() => delivered(2).length === 1, 20_000, 'DEMO-2 to close out by itself');
    for (const n of [1, 2, 3]) {
      const issue = sandbox.repo.issues.get(n)!;
      expect([
        n,
        issue.state,
        issue.stateReason,
        issue.labels.includes('yoke:delivered'),
        issue.labels.includes('yoke:delivery-owed'),
        delivered(n).length,
      ]).toEqual([n, 'closed', 'completed', true, false, 1]);
    }
    expect(delivered(1)[0]!.body).toBe(
      `@demo-agent DEMO-1 is delivered: deployment run \`${run.id}\` accepted it at stage \`staging-qa\` on \`${run.commit}\`. Issue #1 is closed as completed and labelled \`yoke:delivered\`.\n\n_Spend on #1 so far: $0.42 over 1 run (18000 input and 2400 output tokens)._`,
    );
  });
});

/** QA10: no notice about the shared plan reached a member's claim PR. */
function QA10(run: string): string[] {
  return [2, 3].flatMap((n) =>
    commentsOn(pullOf(n))
      .filter((c) => c.body.includes(`${run}-g1`))
      .map((c) => c.body),
  );
}

describe('what yoke logged here', () => {
  it('holds no warning or error that no test here claimed', () => {
    expect(unclaimedWarnings(ds?.sandbox, CLAIMED_WARNINGS)).toEqual([]);
  });
});
