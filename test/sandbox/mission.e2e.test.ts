import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attachDemoPlans, deliverDemo, type DeliveryResult } from '../../sandbox/deliver.js';
import { DEMO_REPO } from '../../sandbox/demo-repo.js';
import { Sandbox } from '../../sandbox/sandbox.js';
import { unclaimedWarnings } from '../helpers/sandbox-log.js';
import { deliveryRecords, DEMO_DELIVERY_RECORDS, sortedRecords } from '../helpers/delivery-records.js';
import type { Sample } from '../helpers/prometheus-text.js';
import { describeMetricsAfterMission, METRICS_TOKEN, scrapedSamples } from './mission-metrics.js';

/**
 * Warnings the tests below provoke, each asserted where it is. One is not
 * provoked but tolerated: now and then (seen when two sandboxes' yokes shared
 * this process), a poll is refused 401 right after its installation token was made
 * (auth-app retries, then the repository is skipped for that pass and read on
 * the next). It is not understood yet; the records below are the same either way.
 */
const CLAIMED_WARNINGS: string[] = [
  '[@octokit/auth-app] Retrying after 401 response',
  'repo read failed; skipped for this pass',
  'installation skipped for this pass',
];

// The whole mission, as `npm run sandbox` runs it: five labelled issues merged,
// then delivered through staging, scoped QA and production by `yoke watch deploy`
// as a child process, and closed out. Asserted from the forge's own records
// (test/helpers/delivery-records.ts: the PostgreSQL e2e, whose driver loses two
// dispatch answers, finds the same).

interface Mission {
  sandbox: Sandbox;
  result: DeliveryResult;
  lines: string[];
  /** The dashboard issue's body at each step: first written, after the merges, after the delivery. */
  dashboard: { created: string; merged: string; delivered: string };
  /** What the store holds as reported spend today for the demo repository, when the merges settled. */
  spentAtMerge: number;
}

/** The repository's dashboard issue, once yoke has opened it. */
const dashboardIssue = (sandbox: Sandbox) =>
  [...sandbox.repo.issues.values()].find((i) => !i.pull && i.labels.includes('yoke:control'));

async function runMission(env: Record<string, string> = {}): Promise<Mission> {
  const sandbox = new Sandbox({ launcher: 'command', failAgent: 0, tickSeconds: 1, reaperSeconds: 1, env });
  await sandbox.start();
  await attachDemoPlans(sandbox);
  await sandbox.waitUntil(() => sandbox.done(), 150_000, 'the demo issues to merge');
  // The body the first pass created it with (the forge keeps it once the issue is edited).
  const created = dashboardIssue(sandbox)!;
  const first = created.bodyEdits?.[0] ?? created.body;
  // Once the last lander is reaped, a pass shows all five deliveries owed and nothing live.
  const settled = (body: string) =>
    body.includes('### Live runs\n_None._') && (body.match(/merged in \[#/g) ?? []).length === 5;
  await sandbox.waitUntil(
    () => settled(dashboardIssue(sandbox)!.body),
    20_000,
    'the dashboard issue to settle after the merges',
  );
  const merged = dashboardIssue(sandbox)!.body;
  const spentAtMerge = (await sandbox.runtime.store.spend.daily(0, Date.now() + 86_400_000))
    .filter((d) => d.repo === DEMO_REPO)
    .reduce((sum, d) => sum + d.usd, 0);
  const lines: string[] = [];
  const result = await deliverDemo(sandbox, { dropAnswers: 0, log: (l) => lines.push(l), timeoutMs: 90_000 });
  await sandbox.waitUntil(
    () => /### Delivery owed\n_None._/.test(dashboardIssue(sandbox)!.body),
    20_000,
    'the dashboard issue to clear owed deliveries',
  );
  return {
    sandbox,
    result,
    lines,
    dashboard: { created: first, merged, delivered: dashboardIssue(sandbox)!.body },
    spentAtMerge,
  };
}

const records = (m: Mission) => deliveryRecords(m.sandbox, m.result);

let plain: Mission;
/** The plain mission's metrics, scraped once its last run was reaped (mission-metrics.ts). */
let samples: Sample[];

beforeAll(async () => {
  plain = await runMission({ YOKE_METRICS_TOKEN: METRICS_TOKEN });
  await plain.sandbox.waitUntil(
    async () => (await plain.sandbox.runtime.store.runs.countLive()) === 0,
    20_000,
    'the last runs to be reaped',
  );
  samples = await scrapedSamples(plain.sandbox);
}, 400_000);

afterAll(async () => {
  await plain?.sandbox.stop();
});

describe('the dashboard issue through the whole mission', () => {
  it('shows each step, and is written only when what it shows changed', () => {
    const { sandbox, dashboard } = plain;
    const issue = dashboardIssue(sandbox)!;
    expect(issue.title).toBe(`yoke dashboard for ${DEMO_REPO}`);
    // First written by the first pass: two runs live at the cap of 2, three issues waiting for a slot.
    expect(dashboard.created).toMatch(
      /### Live runs\n- `[\w-]+` afk_auto \[#1\]\(http:\/\/127\.0\.0\.1:\d+\/acme\/demo\/issues\/1\) Add a shout helper, for labelled yoke:afk\n- `[\w-]+` afk_auto \[#2\]/,
    );
    expect(
      dashboard.created.match(
        /`at_cap` Waits for a slot: 2 run\(s\) are live and acme\/demo may have at most 2 at once\./g,
      ),
    ).toHaveLength(3);
    // After the merges: nothing live or waiting, five deliveries owed, the demo agent's spend.
    expect(dashboard.merged).toContain('### Live runs\n_None._');
    expect(dashboard.merged).toContain('_Nothing is waiting: the last pass started everything it found._');
    expect(dashboard.merged.match(/^- \[#\d\]\(.*\), merged in \[#\d+\]/gm)).toHaveLength(5);
    // The demo agent reports a cost for every run (the review-driven fix and the landers too): the
    // dashboard shows what the store holds, not a figure of its own.
    expect(plain.spentAtMerge).toBeGreaterThan(2);
    expect(dashboard.merged).toContain(`### Spend\n$${plain.spentAtMerge.toFixed(2)} reported today (UTC).`);
    // After the delivery: none owed.
    expect(dashboard.delivered).toContain('### Delivery owed\n_None._');
    // Every write changed the text: no edit repeats the body before it.
    const bodies = issue.bodyEdits!;
    expect(bodies[0]).toBe(dashboard.created);
    for (let i = 1; i < bodies.length; i++) expect(bodies[i], `edit ${i}`).not.toBe(bodies[i - 1]);
    // A handful of writes over a mission of well over a hundred passes.
    expect(bodies.length - 1).toBeLessThan(40);
  });
});

describe('the whole mission, from labelled issue to closed-out delivery', () => {
  it('delivers every merged issue: the driver stops at the flaky triage, the pinned commit is retried, and it resumes to production', async () => {
    expect(await sortedRecords(plain.sandbox, plain.result)).toEqual(DEMO_DELIVERY_RECORDS);
    const r = await records(plain);
    expect([r.status, r.exits]).toEqual(['succeeded', [3, 0]]);
    expect(r.issues).toEqual([1, 2, 3, 4, 5].map((n) => [n, 'closed', 'completed', ['yoke:delivered']]));
    // Exactly one close-out per member; DEMO-5 (no plan) first, in the first gate check.
    expect([...r.closeouts].sort()).toEqual([1, 2, 3, 4, 5]);
    expect(r.closeouts[0]).toBe(5);
    // QA10: no notice about the shared plan on any member's claim PR.
    expect(r.holderNoticesAboutShared).toBe(0);
    // Notices: the holder's on its claim PR, the driver's on the tracking issue; the group's withdrawn when it closed.
    expect(r.notices).toEqual(['driver:DEMO-1:resolved', 'driver:RUN-g1:withdrawn', 'holder:DEMO-1:resolved']);
    expect(
      plain.lines.some((l) => l.includes('the demo agent runs: yoke qa plan run --item DEMO-1 --stage staging-qa')),
    ).toBe(true);
    const tracking = (await plain.sandbox.runtime.store.deploymentRuns.get(plain.result.run))!.trackingIssue!;
    expect(plain.sandbox.repo.issues.get(tracking)!.labels).toEqual(['yoke:deploy']);
    // The driver's triage, which it printed before it stopped, named the pinned commit.
    const pinned = (await plain.sandbox.runtime.store.deploymentRuns.get(plain.result.run))!.commit;
    expect(plain.lines.some((l) => l.includes(`stopped: Shared plan smoke failed at ${pinned}`))).toBe(true);
    // The group's notice was posted, edited when its wait changed, and withdrawn in place: one comment throughout.
    const group = (await plain.sandbox.runtime.store.notices.forRun(plain.result.run)).find((n) =>
      n.subject.endsWith('-g1'),
    )!;
    const comment = plain.sandbox.repo.comments.find((c) => c.id === group.commentId)!;
    expect([
      comment.issueNumber,
      comment.updatedAt > comment.createdAt,
      comment.body.includes('withdrawn: group'),
    ]).toEqual([tracking, true, true]);
    expect(
      plain.sandbox.repo.comments.filter(
        (c) => c.issueNumber === tracking && c.body.includes(`for ${plain.result.run}-g1.`),
      ).length,
    ).toBe(0);
  });
});

describe('the delivery where GitHub shows deployments', () => {
  it('DP01 DP02 DP03 staging and production run as templates/deploy.yml on Actions, each a deployment with its statuses; production waited for yoke, which approved the settled commit', async () => {
    const { sandbox, result } = plain;
    const pinned = (await sandbox.runtime.store.deploymentRuns.get(result.run))!.commit;
    const mine = await sandbox.runtime.store.stageDeployments.forRun(result.run);
    expect(mine.map((d) => [d.stage, d.environment, d.workflow, d.state, d.commit])).toEqual([
      ['staging', 'staging', 'deploy.yml', 'success', pinned],
      ['production', 'production', 'deploy.yml', 'success', pinned],
    ]);
    const forge = sandbox.forge.deployments;
    const ofEnv = (env: string) => forge.deployments.filter((d) => d.repo === DEMO_REPO && d.environment === env);
    // Per environment: yoke's deployment (its payload names the run), written by the workflow, and the job's own (Actions'), both at the pinned commit.
    for (const env of ['staging', 'production']) {
      const [yokes, jobs] = [
        ofEnv(env).filter((d) => d.creator.login === 'yoke-sandbox[bot]'),
        ofEnv(env).filter((d) => d.creator.login === 'github-actions[bot]'),
      ];
      expect(yokes.map((d) => [d.sha, (d.payload as Record<string, unknown>).yoke_deployment_run])).toEqual([
        [pinned, result.run],
      ]);
      // Oldest first: yoke's start, then the workflow's own statuses (yoke adds the log link if it saw the run still going; a later success elsewhere in the environment makes it inactive).
      const said = (d: (typeof yokes)[number], who: string) =>
        d.statuses
          .filter((st) => st.creator.login === who && st.state !== 'inactive')
          .map((st) => st.state)
          .reverse();
      expect(said(yokes[0]!, 'github-actions[bot]')).toEqual(['in_progress', 'success']);
      expect(said(yokes[0]!, 'yoke-sandbox[bot]').filter((st, i) => i === 0 || st !== 'in_progress')).toEqual([
        'in_progress',
      ]);
      expect(said(jobs[0]!, 'github-actions[bot]')).toEqual(
        env === 'production' ? ['waiting', 'in_progress', 'success'] : ['in_progress', 'success'],
      );
      expect(
        yokes[0]!.statuses.some((st) => st.state === 'success' && st.creator.login === 'github-actions[bot]'),
      ).toBe(true);
      expect(jobs.map((d) => d.sha)).toEqual([pinned]);
    }
    // Staging has no rule: nothing waited. Production's job waited at yoke's rule, which approved once staging-qa settled.
    const gates = forge.gates.filter((g) => g.repo === DEMO_REPO);
    expect(gates.map((g) => [g.environment, g.answers.map((a) => `${a.app}:${a.state}`)])).toEqual([
      ['production', ['yoke-sandbox:approved']],
    ]);
    expect(gates[0]!.answers[0]!.comment).toBe(
      `yoke: Deployment run ${result.run} settled staging-qa at ${pinned.slice(0, 12)}: production (stage production) may deploy it.`,
    );
    expect(await sandbox.runtime.store.stageDeployments.reviews(DEMO_REPO)).toMatchObject([
      {
        environment: 'production',
        sha: pinned,
        decision: 'approved',
        code: 'protection_settled',
        deploymentRun: result.run,
        answer: 'answered',
      },
    ]);
    // The tracking issue links each deployment to its environment's page, and its workflow run.
    const tracking = sandbox.repo.issues.get(
      (await sandbox.runtime.store.deploymentRuns.get(result.run))!.trackingIssue!,
    )!.body;
    for (const d of mine)
      expect(tracking).toContain(
        `  - deployment [${d.deploymentId}](${sandbox.forge.url}/${DEMO_REPO}/deployments/${d.environment}) to \`${d.environment}\`: success · [log](${sandbox.forge.url}/${DEMO_REPO}/actions/runs/${d.workflowRunId})`,
      );
    // The forge's page shows them.
    const html = await (await fetch(`${sandbox.forge.url}/${DEMO_REPO}/deployments`)).text();
    expect(html).toContain('<h2 id="production">production</h2><p>Protection rules: yoke-sandbox</p>');
    expect(html).toContain(`yoke-sandbox approved: yoke: Deployment run ${result.run} settled staging-qa`);
  });
});

describeMetricsAfterMission(() => ({ sandbox: plain.sandbox, samples }));

describe('what yoke logged here', () => {
  it('holds no warning or error that no test here claimed', () => {
    expect(unclaimedWarnings(plain?.sandbox, CLAIMED_WARNINGS)).toEqual([]);
  });
});
