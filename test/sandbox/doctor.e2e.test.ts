import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_FILES, DEMO_REPO, shippedWorkflow } from '../../sandbox/demo-repo.js';
import { Sandbox } from '../../sandbox/sandbox.js';
import { runCli } from '../../src/cli/main.js';
import { loadShippedSetup } from '../../src/http/operator/doctor.js';
import { landerRuleset } from '../../src/config/landing.js';
import { unclaimedWarnings } from '../helpers/sandbox-log.js';

// `yoke doctor OWNER/REPO` and `yoke plan OWNER/REPO` against the sandbox's
// yoke and forge: the demo repository as its maintainer set it up, then a
// repository of the same installation with each check made to fail, and a
// yoke whose public URL nothing answers at. Whole texts compared.

let s: Sandbox;
let deadPort = 0;

beforeAll(async () => {
  deadPort = await new Promise<number>((done) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => done(port));
    });
  });
  // No issue is opened: nothing runs, so what the plan and the checks say stays put.
  s = new Sandbox({ launcher: 'actions', failAgent: 0, issues: 0, tickSeconds: 1, env: {} });
  await s.start();
}, 90_000);

afterAll(async () => {
  await s?.stop();
}, 30_000);

async function yoke(box: Sandbox, args: string[]): Promise<{ code: number; out: string }> {
  const out: string[] = [];
  const code = await runCli(args, {
    out: (l) => out.push(l),
    err: (l) => out.push(l),
    env: { YOKE_URL: box.yokeUrl, YOKE_TOKEN: box.apiToken },
    fetch,
  });
  // Which yoke process reads the installation: its id, host and pid differ from run to run.
  return { code, out: out.join('\n').replace(/p-[0-9a-f]{12} \(host [^,)]+, pid \d+\)/g, '<process>') };
}

/** A repository of the demo's installation, seeded with the demo's files changed as given. */
function repoWith(name: string, files: Record<string, string | null>) {
  const seeded = { ...DEMO_FILES };
  for (const [path, text] of Object.entries(files)) {
    if (text === null) delete seeded[path];
    else seeded[path] = text;
  }
  const repo = s.forge.createRepo(name, { files: seeded as Record<string, string>, installationId: 1 });
  // main protected as the demo's is: a ruleset requires yoke/lander from yoke's app.
  repo.requiredChecks.set('main', [{ context: 'yoke/lander', integrationId: 1 }]);
  return repo;
}

const HEALTHY = (repo: string, url: string) => [
  `${repo} is set up for yoke: every check passed.`,
  `ok: installed: yoke's app is installed on ${repo} (installation 1).`,
  'ok: reading: One yoke process, <process>, reads every installation, this one (1) too.',
  'ok: permissions: The installation grants every permission app.yml asks for.',
  'ok: events: The installation receives every event app.yml asks for.',
  'ok: opt_in: .github/yoke.yml is valid.',
  "ok: landing: main requires yoke/lander from yoke's app (1), and yoke lands through the PR, merging by squash, as .github/yoke.yml chooses.",
  'ok: workflow: .github/workflows/yoke-run.yml is the workflow this yoke ships for an agent of your own (.github/yoke/run.sh).',
  'skipped: secret: Your agent names no secret (YOKE_AGENT_SECRETS is empty in the workflow).',
  `ok: public_url: ${url}/yoke/runner.mjs serves this yoke's runner.`,
  "ok: environments: production has yoke's protection rule and lets yoke/deploy/* branches deploy.",
];

describe('yoke doctor, in the sandbox', () => {
  it('passes the demo repository as its maintainer set it up', async () => {
    expect(await yoke(s, ['doctor', DEMO_REPO])).toEqual({
      code: 0,
      out: HEALTHY(DEMO_REPO, s.yokeUrl).join('\n'),
    });
  });

  it('names the installation it cannot find, and what installs it', async () => {
    expect(await yoke(s, ['doctor', 'acme/elsewhere'])).toEqual({
      code: 1,
      out: [
        'acme/elsewhere is not set up for yoke yet: 1 of 1 checks failed.',
        "FAILED: installed: yoke's GitHub App is not installed on acme/elsewhere, so yoke cannot see it.",
        "  fix: Install the app on acme/elsewhere (the app's page on GitHub, Install App, then pick the repository), and run `yoke doctor acme/elsewhere` to check the rest.",
      ].join('\n'),
    });
  });

  it('names each permission and event the installation lacks, and the settings that grant them', async () => {
    const { permissions, events } = loadShippedSetup();
    s.forge.grants.set(1, {
      permissions: { ...permissions, checks: 'read', deployments: 'none' },
      events: events.filter((e) => e !== 'deployment_protection_rule'),
    });
    try {
      // The CLI's first call may meet a connection the stopped yoke closed: ask until the new one answers.
      await expect
        .poll(
          () =>
            fetch(`${s.yokeUrl}/yoke/api/health`).then(
              (x) => x.status,
              () => 0,
            ),
          { timeout: 10_000 },
        )
        .toBe(200);
      const r = await yoke(s, ['doctor', DEMO_REPO]);
      expect(r.code).toBe(1);
      expect(r.out.split('\n').slice(0, 2)).toEqual([
        `${DEMO_REPO} is not set up for yoke yet: 2 of 10 checks failed.`,
        "ok: installed: yoke's app is installed on acme/demo (installation 1).",
      ]);
      expect(r.out.split('\n').slice(3, 7)).toEqual([
        'FAILED: permissions: The installation grants less than app.yml asks for: checks (asks write, grants read), deployments (asks write, grants none).',
        "  fix: Give the app these permissions: on GitHub, the app's settings, Permissions & events, set checks to Read and write, deployments to Read and write and save; then an owner of acme accepts the new permissions on the installation (Settings, GitHub Apps, Configure).",
        'FAILED: events: The installation does not receive deployment_protection_rule: yoke would hear of those changes only when it next polls, and never of a deployment protection request.',
        "  fix: Subscribe the app to them: on GitHub, the app's settings, Permissions & events, Subscribe to events, tick deployment_protection_rule and save; then accept the change on the installation.",
      ]);
      // Without the secrets permission, the secrets cannot be listed, and that check says why.
      s.forge.grants.set(1, { permissions: { ...permissions, secrets: 'none' }, events });
      const noSecrets = repoWith('acme/no-secrets', {
        '.github/workflows/yoke-run.yml': shippedWorkflow('claude-code'),
      });
      const lines = (await yoke(s, ['doctor', noSecrets.fullName])).out.split('\n');
      expect(lines.filter((l) => /^(FAILED: secret|  fix: Give the app the Secrets)/.test(l))).toEqual([
        "FAILED: secret: yoke could not list acme/no-secrets's Actions secrets: Resource not accessible by integration - https://docs.github.com/rest.",
        '  fix: Give the app the Secrets permission (Read-only: it lists names, never values), as app.yml asks, and accept it on the installation.',
      ]);
    } finally {
      s.forge.grants.delete(1);
    }
  });

  it('fails a repository with no opt-in file and no workflow, naming what writes them', async () => {
    const bare = repoWith('acme/bare', { '.github/yoke.yml': null, '.github/workflows/yoke-run.yml': null });
    const r = await yoke(s, ['doctor', bare.fullName]);
    expect(r.code).toBe(1);
    expect(r.out.split('\n').filter((l) => /^(FAILED|  fix|skipped)/.test(l))).toEqual([
      'FAILED: opt_in: acme/bare has no .github/yoke.yml on its default branch, so yoke does nothing there.',
      '  fix: Run `yoke init --agent claude-code` (or codex) in a checkout, then commit and push what it writes.',
      'skipped: landing: No valid .github/yoke.yml says how yoke lands (see opt_in).',
      'FAILED: workflow: .github/workflows/yoke-run.yml is not on the default branch, so yoke cannot start a run there.',
      '  fix: `yoke init --agent claude-code` (or codex) writes it; commit and push it to the default branch.',
      "FAILED: secret: an agent's secret is not set: none of ANTHROPIC_API_KEY, CLAUDE_CODE_OAUTH_TOKEN, CODEX_API_KEY is among acme/bare's Actions secrets.",
      '  fix: Add the repository secret ANTHROPIC_API_KEY: Settings, Secrets and variables, Actions, New repository secret.',
      "skipped: environments: No deploy stage follows a QA stage, so no environment waits on yoke's rule.",
    ]);
  });

  it("fails a workflow that is not yoke's, and Claude Code's workflow without its secret; passes it once the secret is set", async () => {
    const edited = repoWith('acme/edited', {
      '.github/workflows/yoke-run.yml': shippedWorkflow('yoke-run').replace(
        'runs-on: ubuntu-latest',
        'runs-on: self-hosted',
      ),
    });
    const lines = (await yoke(s, ['doctor', edited.fullName])).out.split('\n');
    const at = lines.findIndex((l) => l.startsWith('FAILED: workflow'));
    expect(lines.slice(at, at + 2)).toEqual([
      'FAILED: workflow: .github/workflows/yoke-run.yml is not a workflow this yoke ships (for claude-code, for codex, or for an agent of your own): the runs yoke dispatches may not start, or not contained as yoke expects.',
      "  fix: Move yours aside and run `yoke init --agent claude-code` (or codex) again, which writes this version's; then commit and push it.",
    ]);
    const claude = repoWith('acme/claude', { '.github/workflows/yoke-run.yml': shippedWorkflow('claude-code') });
    const before = (await yoke(s, ['doctor', claude.fullName])).out.split('\n');
    expect(before.filter((l) => /^(ok: workflow|FAILED: secret|  fix: Add)/.test(l))).toEqual([
      'ok: workflow: .github/workflows/yoke-run.yml is the workflow this yoke ships for claude-code.',
      "FAILED: secret: claude-code's secret is not set: none of ANTHROPIC_API_KEY, CLAUDE_CODE_OAUTH_TOKEN is among acme/claude's Actions secrets.",
      '  fix: Add the repository secret ANTHROPIC_API_KEY: Settings, Secrets and variables, Actions, New repository secret.',
    ]);
    claude.secrets.CLAUDE_CODE_OAUTH_TOKEN = 'x';
    s.forge.deployments.setEnvironment(claude, 'production', [{ id: 1, slug: 'yoke-sandbox' }]);
    const after = await yoke(s, ['doctor', claude.fullName]);
    expect([after.code, after.out.split('\n').find((l) => l.includes('secret:'))]).toEqual([
      0,
      "ok: secret: claude-code's secret is set (CLAUDE_CODE_OAUTH_TOKEN).",
    ]);
  });

  it("fails environments without yoke's rule or that refuse yoke/deploy/* branches, with the setting for each", async () => {
    const envs = repoWith('acme/envs', {});
    s.forge.deployments.setEnvironment(envs, 'production', []);
    s.forge.deployments.setBranchPolicy(envs, 'production', { kind: 'protected' });
    const r = await yoke(s, ['doctor', envs.fullName]);
    expect(r.out.split('\n').filter((l) => /environments|^  fix: Enable/.test(l))).toEqual([
      "FAILED: environments: Environment production of acme/envs (stage production) does not have yoke's protection rule: anyone who can run its deploy can ship a commit whose QA never settled. Environment production deploys only from protected branches, and yoke deploys from yoke/deploy/* branches.",
      '  fix: Enable it: Settings, Environments, `production`, Deployment protection rules, tick `yoke-sandbox`, Save protection rules. Settings, Environments, `production`, Deployment branches and tags: choose Selected branches and tags and add the rule `yoke/deploy/*`.',
    ]);
    s.forge.deployments.setEnvironment(envs, 'production', [{ id: 1, slug: 'yoke-sandbox' }]);
    s.forge.deployments.setBranchPolicy(envs, 'production', { kind: 'custom', branches: ['main', 'yoke/deploy/*'] });
    expect((await yoke(s, ['doctor', envs.fullName])).code).toBe(0);
    s.forge.deployments.setBranchPolicy(envs, 'production', { kind: 'custom', branches: ['main'] });
    expect((await yoke(s, ['doctor', envs.fullName])).out.split('\n').find((l) => l.startsWith('FAILED'))).toBe(
      'FAILED: environments: Environment production deploys only from the branches main, and yoke deploys from yoke/deploy/* branches.',
    );
  });

  it("fails main's rules that do not hold what its way of landing needs, and passes the ruleset `yoke init --landing` prints", async () => {
    const repo = repoWith('acme/landing', {});
    repo.requiredChecks.delete('main');
    const landing = async (name = repo.fullName) =>
      (await yoke(s, ['doctor', name])).out.split('\n').filter((l) => /^\S+: landing|^  fix: (Add|Set|Choose)/.test(l));
    // Unprotected: anyone who can merge on main merges what no lander accepted.
    expect(await landing()).toEqual([
      "FAILED: landing: main's rules do not require the status check yoke/lander, so anyone who can merge there can merge a PR no lander accepted.",
      "  fix: Add yoke's ruleset for landing through the PR: `yoke init --agent claude-code --landing pr --app-id 1` prints it, ready for `gh api repos/acme/landing/rulesets --input -` (or on GitHub: Settings, Rules, Rulesets).",
    ]);
    // yoke/lander required from any source: a writer's own status named yoke/lander would do.
    repo.requiredChecks.set('main', [{ context: 'yoke/lander', integrationId: null }]);
    expect((await landing())[0]).toBe(
      "FAILED: landing: main's rules require yoke/lander from any source, not from yoke's app (1): a yoke/lander status that a writer or a workflow posts satisfies them.",
    );
    // The ruleset `yoke init --landing queue --app-id 1` prints, applied as `gh api` would: its checks and its queue.
    const ruleset = JSON.parse(landerRuleset(1, 'queue')) as {
      rules: {
        type: string;
        parameters: { required_status_checks?: { context: string; integration_id: number }[]; merge_method?: string };
      }[];
    };
    const checks = ruleset.rules.find((r) => r.type === 'required_status_checks')!.parameters.required_status_checks!;
    repo.requiredChecks.set(
      'main',
      checks.map((c) => ({ context: c.context, integrationId: c.integration_id })),
    );
    repo.mergeQueue.add('main');
    repo.mergeQueueMethod = ruleset.rules.find((r) => r.type === 'merge_queue')!.parameters.merge_method!;
    expect(await landing()).toEqual([
      "ok: landing: main requires yoke/lander from yoke's app (1), and yoke lands through GitHub's merge queue, merging by squash, as .github/yoke.yml chooses.",
    ]);
    // An opt-in file that asks for fast-forward landing on a branch the queue guards: the queue refuses every move.
    const ff = repoWith('acme/ff-queue', {
      '.github/yoke.yml': DEMO_FILES['.github/yoke.yml']!.replace(
        'autoland: { enabled: true, merge_method: squash }',
        'autoland: { enabled: true, merge_method: squash, fast_forward: true }',
      ),
    });
    ff.mergeQueue.add('main');
    expect(await landing(ff.fullName)).toEqual([
      "FAILED: landing: .github/yoke.yml lands by fast-forward (autoland.fast_forward), but main's rules require the merge queue: GitHub refuses every move of main but the queue's, so nothing lands.",
      "  fix: Choose one way: remove autoland.fast_forward from .github/yoke.yml to land through the queue, or remove the merge_queue rule from main's ruleset to land by fast-forward.",
    ]);
  });

  it('fails a public URL nothing answers at, with the setting to make', async () => {
    // The same yoke, restarted with a public URL at which nothing listens, then restored.
    // A call after a restart may meet a connection the stopped yoke closed: ask until the new one answers.
    const restart = async () => {
      await s.restartYoke();
      await expect
        .poll(
          () =>
            fetch(`${s.yokeUrl}/yoke/api/health`).then(
              (x) => x.status,
              () => 0,
            ),
          { timeout: 10_000 },
        )
        .toBe(200);
    };
    s.opts.env!.YOKE_PUBLIC_URL = `http://127.0.0.1:${deadPort}`;
    await restart();
    try {
      const r = await yoke(s, ['doctor', DEMO_REPO]);
      expect(r.code).toBe(1);
      expect(r.out.split('\n').filter((l) => /public_url|YOKE_PUBLIC_URL/.test(l))).toEqual([
        `FAILED: public_url: http://127.0.0.1:${deadPort}/yoke/runner.mjs did not answer: connect ECONNREFUSED 127.0.0.1:${deadPort}.`,
        `  fix: Set YOKE_PUBLIC_URL to the https address at which GitHub's runners reach this yoke (the app's webhook URL without /api/github/webhooks), and make sure http://127.0.0.1:${deadPort}/yoke/runner.mjs answers there.`,
      ]);
      // Runs that reach yoke through GitHub call no URL of yoke's: the same dead URL is then nothing to fix.
      s.opts.env!.YOKE_RUNS_REACH = 'github';
      await restart();
      const g = await yoke(s, ['doctor', DEMO_REPO]);
      expect(g.code).toBe(0);
      expect(g.out.split('\n').filter((l) => /public_url/.test(l))).toEqual([
        'skipped: public_url: Not needed: runs reach this yoke through GitHub (YOKE_RUNS_REACH=github): they fetch the runner from refs/yoke/runner/<sha256> in the repository and hand their results back as workflow artifacts.',
      ]);
    } finally {
      delete s.opts.env!.YOKE_PUBLIC_URL;
      delete s.opts.env!.YOKE_RUNS_REACH;
      await restart();
    }
  }, 60_000);

  it('is on the dashboard, for operators', async () => {
    const page = await fetch(`${s.yokeUrl}/yoke/repos/${DEMO_REPO}/doctor`, {
      headers: { authorization: `Bearer ${s.apiToken}` },
    });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain(`<h2>The set-up of ${DEMO_REPO}: ready</h2>`);
    expect((await fetch(`${s.yokeUrl}/yoke/repos/${DEMO_REPO}/doctor`)).status).toBe(401);
  });
});

describe('what yoke logged meanwhile', () => {
  it('is nothing no test here asserts on: a restart lets its tick in flight finish under its lead', () => {
    expect(unclaimedWarnings(s)).toEqual([]);
  });
});

describe('yoke plan, in the sandbox', () => {
  it('says the next pass would launch nothing on a repository with no labelled issue, with its cap, spend and protected paths', async () => {
    expect(await yoke(s, ['plan', DEMO_REPO])).toEqual({
      code: 0,
      out: [
        `The next pass for ${DEMO_REPO}, if it ran now (nothing was started or changed):`,
        '- It would launch nothing here.',
        '- Cap: 2; 0 run(s) live fleet-wide (0 here).',
        '- Spent today (UTC): $0.00 here, no daily limit set here; $0.00 fleet-wide, no fleet limit.',
        "- Protected paths (a claim PR that changes one waits for a writer's approval): .github/**, **/CLAUDE.md, **/CLAUDE.local.md, **/AGENTS.md, **/AGENTS.override.md, .claude/**, .mcp.json, .codex/**, .agents/**.",
      ].join('\n'),
    });
  });
});
