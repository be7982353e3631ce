import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkoutIo } from '../../src/cli/exec.js';
import { runCli } from '../../src/cli/main.js';
import type { DeploymentView } from '../../src/qa/view.js';
import { DEMO_ENGINE_CONFIG, DEMO_REPO, DEMO_TASKS, MAINTAINER } from '../../src/sandbox/demo-repo.js';
import { Sandbox } from '../../src/sandbox/sandbox.js';

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
  '.github/yoke/qa/checkout.yml': 'name: checkout\ncases:\n  - {id: deployed, title: Staging runs the pinned commit, run: \'test "$(cat .deployed-staging)" = "$YOKE_COMMIT"\'}\n',
  '.github/yoke/qa/smoke.yml': 'name: smoke\ncases:\n  - {id: tests, title: Tests pass, run: node test/run.js}\n',
};

let sandbox: Sandbox;
let checkout: string;

async function yoke(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(args, checkoutIo(checkout, { YOKE_URL: sandbox.yokeUrl, YOKE_TOKEN: sandbox.apiToken, YOKE_LOGIN: MAINTAINER }, (l) => out.push(l), (l) => err.push(l)));
  return { code, out: out.join('\n'), err: err.join('\n') };
}

async function api(base: string, token: string, method: string, path: string, body?: unknown): Promise<Response> {
  const res = await fetch(`${base}${path}`, { method, headers: { authorization: `${base.includes('/api/v3') ? 'token' : 'Bearer'} ${token}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res;
}
const forge = (method: string, path: string, body?: unknown) => api(`${sandbox.forge.url}/api/v3/repos/${DEMO_REPO}`, sandbox.maintainerToken, method, path, body);
const yokeApi = (method: string, path: string, body?: unknown) => api(sandbox.yokeUrl, sandbox.apiToken, method, path, body);

const pullOf = (issue: number) => [...sandbox.repo.issues.values()].find((i) => i.pull && i.body.includes(`Closes #${issue}`))!.number;
const commentsOn = (n: number) => sandbox.repo.comments.filter((c) => c.issueNumber === n);

beforeAll(async () => {
  sandbox = new Sandbox({ launcher: 'command', failAgent: 0, tickSeconds: 1, reaperSeconds: 1, tasks: [DEMO_TASKS[0]!, DEMO_TASKS[1]!, DEMO_TASKS[3]!], files: FILES });
  await sandbox.start();
  // Three tasks that merge at their first lander: delivery is what this test is about.
  await sandbox.waitUntil(() => sandbox.done(), 150_000, 'the three demo issues to merge');
  await sandbox.comment(1, '/yoke qa attach checkout');
  await sandbox.comment(2, '/yoke qa attach smoke');
  await sandbox.comment(3, '/yoke qa attach smoke');
  await sandbox.waitUntil(() => sandbox.runtime.store.qa.attachments(DEMO_REPO).length === 3, 30_000, 'three attachments');
  checkout = mkdtempSync(join(tmpdir(), 'yoke-checkout-'));
  execFileSync('git', ['clone', '--quiet', sandbox.repo.gitDir, checkout]);
}, 200_000);

afterAll(async () => {
  await sandbox?.stop();
  if (checkout) rmSync(checkout, { recursive: true, force: true });
});

describe('notices and close-out over real HTTP', () => {
  it('wakes, redelivers, withdraws and closes out, where people look', async () => {
    const run = JSON.parse((await yoke(['deployment-runs', 'create', DEMO_REPO, '--json'])).out) as DeploymentView;
    const tracking = run.trackingIssue!;
    await yokeApi('POST', `/yoke/api/deployment-runs/${run.id}/checkin`, { driver: 'ci-driver', lease_seconds: 2 });
    await yoke(['deploy', 'stage', 'run', run.id, 'staging']);
    // While ci-driver holds the lease, a dispatch is its own.
    expect((await yoke(['deployment-runs', 'dispatch', run.id, 'staging-qa', '--driver', 'ci-driver'])).err).toBe('');

    // The holder of DEMO-1's own plan is told on its claim PR, and runs the command the notice gives.
    const [holderNotice] = commentsOn(pullOf(1)).filter((c) => c.body.includes('is waiting at stage'));
    expect(holderNotice!.body.split('\n')[0]).toBe(`@demo-agent deployment run \`${run.id}\` is waiting at stage \`staging-qa\` for DEMO-1.`);
    const command = /`(yoke qa plan run [^`]+)`/.exec(holderNotice!.body)![1]!;
    expect(command).toBe('yoke qa plan run --item DEMO-1 --stage staging-qa');
    expect((await yoke(command.split(' ').slice(1))).code).toBe(0);

    // The shared plan's wait is the driver's; once its lease lapses it goes to the creator, who declines it to steering.
    const groupNotices = () => commentsOn(tracking).filter((c) => c.body.includes(`for ${run.id}-g1.`)).map((c) => c.body.split(' deployment run')[0]);
    expect(groupNotices()).toEqual(['driver `ci-driver`']);
    await new Promise((r) => setTimeout(r, 2_100));
    await yoke(['deployment-runs', 'dispatch', run.id, 'staging-qa']);
    expect(groupNotices()).toEqual(['driver `ci-driver`', `@${MAINTAINER}`]);
    await sandbox.comment(tracking, '/yoke qa decline');
    await sandbox.waitUntil(() => groupNotices().length === 3, 20_000, 'the declined notice to reach steering');
    expect(groupNotices()).toEqual(['driver `ci-driver`', `@${MAINTAINER}`, '@steerer']);
    expect(QA10(run.id)).toEqual([]);

    // Before the stage settles, DEMO-2's issue is locked.
    await forge('PUT', '/issues/2/lock');
    expect((await yoke(['qa', 'plan', 'run', '--deployment-run-id', run.id, '--stage', 'staging-qa', '--plan', 'smoke'])).code).toBe(0);
    // The group closed: steering's notice says it is withdrawn.
    const steering = commentsOn(tracking).find((c) => c.body.startsWith('@steerer'))!;
    expect(steering.body).toBe(`@steerer withdrawn: group \`${run.id}-g1\` of deployment run \`${run.id}\` closed, so nothing waits on it any more.`);

    const delivered = (n: number) => commentsOn(pullOf(n)).filter((c) => c.body.includes(`DEMO-${n} is delivered`));
    expect([delivered(1).length, delivered(2).length, delivered(3).length]).toEqual([1, 0, 1]);
    const refused = commentsOn(pullOf(2)).find((c) => c.body.includes('could not be closed out'))!;
    expect(refused.body).toContain('- DEMO-2 was accepted but could not be closed out: issue #2 is locked: `Unlock #2.');
    expect(sandbox.repo.issues.get(2)!.labels).toContain('yoke:delivery-owed');

    await forge('DELETE', '/issues/2/lock');
    await sandbox.waitUntil(() => delivered(2).length === 1, 20_000, 'DEMO-2 to close out by itself');
    for (const n of [1, 2, 3]) {
      const issue = sandbox.repo.issues.get(n)!;
      expect([n, issue.state, issue.stateReason, issue.labels.includes('yoke:delivered'), issue.labels.includes('yoke:delivery-owed'), delivered(n).length]).toEqual([n, 'closed', 'completed', true, false, 1]);
    }
    expect(delivered(1)[0]!.body).toBe(`@demo-agent DEMO-1 is delivered: deployment run \`${run.id}\` accepted it at stage \`staging-qa\` on \`${run.commit}\`. Issue #1 is closed as completed and labelled \`yoke:delivered\`.\n\n_Spend on #1 so far: $0.42 over 1 run (18000 input and 2400 output tokens)._`);
  });
});

/** QA10: no notice about the shared plan reached a member's claim PR. */
function QA10(run: string): string[] {
  return [2, 3].flatMap((n) => commentsOn(pullOf(n)).filter((c) => c.body.includes(`${run}-g1`)).map((c) => c.body));
}
