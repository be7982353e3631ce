import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';

// LD03: the validate job checks out the very commit yoke built (land_sha) and checks it is yoke's pinned tree:
// the base, with each stacked head and then the PR's own merged on in order. The step's own script, taken from
// each shipped template, runs with bash against a real repository where a writer slipped a commit in.

const TEMPLATES = ['templates/yoke-run.yml', 'templates/agents/claude-code.yml', 'templates/agents/codex.yml'];
const VALIDATE = "Check out the default branch's validate.sh and the PR's head on its base";
const WORK = 'Check out the work';

type Step = { name?: string; run?: string; env?: Record<string, string> };

/** A step of a shipped template: its script, and the env it sets that needs no expression (GitHub's own values come from the test). */
function stepOf(file: string, job: string, name: string): { run: string; env: Record<string, string> } {
  const wf = parse(readFileSync(file, 'utf8')) as { jobs: Record<string, { steps: Step[] }> };
  const step = wf.jobs[job]!.steps.find((s) => s.name === name);
  if (!step?.run) throw new Error(`${file} has no step "${name}" in ${job}`);
  const env = Object.entries(step.env ?? {}).filter(([, v]) => !String(v).includes('${{'));
  return { run: step.run, env: Object.fromEntries(env.map(([k, v]) => [k, String(v)])) };
}

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const git = (cwd: string, args: string[]) =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], {
    cwd,
    encoding: 'utf8',
  }).trim();

/** A repository as GitHub holds it: main at the base, a stacked head and the PR's head, and land commits built on it. */
function repository() {
  const root = mkdtempSync(join(tmpdir(), 'yoke-validate-'));
  dirs.push(root);
  const work = join(root, 'work');
  git(root, ['init', '-q', '-b', 'main', work]);
  const commit = (file: string, msg: string) => {
    writeFileSync(join(work, file), msg);
    git(work, ['add', file]);
    git(work, ['commit', '-q', '-m', msg]);
    return git(work, ['rev-parse', 'HEAD']);
  };
  const base = commit('base.txt', 'base');
  git(work, ['checkout', '-q', '-b', 's1', base]);
  const s1 = commit('s1.txt', 's1');
  git(work, ['checkout', '-q', '-b', 'head', base]);
  const head = commit('head.txt', 'head');
  git(work, ['checkout', '-q', '-b', 'yoke/land/7', base]);
  git(work, ['merge', '-q', '--no-ff', '--no-edit', s1]);
  git(work, ['merge', '-q', '--no-ff', '--no-edit', head]);
  const land = git(work, ['rev-parse', 'HEAD']);
  // A writer pushes X onto the land branch in the window; GitHub's merges API then merges the head onto X.
  git(work, ['checkout', '-q', '-b', 'forged', base]);
  git(work, ['merge', '-q', '--no-ff', '--no-edit', s1]);
  const x = commit('.github-workflows-evil.txt', 'slipped in');
  git(work, ['merge', '-q', '--no-ff', '--no-edit', head]);
  const forged = git(work, ['rev-parse', 'HEAD']);
  git(work, ['checkout', '-q', 'main']);
  execFileSync('git', ['clone', '-q', '--bare', work, join(root, 'acme', 'demo.git')]);
  git(join(root, 'acme', 'demo.git'), ['config', 'uploadpack.allowAnySHA1InWant', 'true']);
  return { root, base, s1, head, land, forged, x };
}

function runStep(
  file: string,
  at: { job: string; step: string; cwd: string },
  r: ReturnType<typeof repository>,
  more: Record<string, string>,
) {
  const step = stepOf(file, at.job, at.step);
  return spawnSync('bash', ['-eo', 'pipefail', '-c', step.run], {
    cwd: at.cwd,
    encoding: 'utf8',
    env: {
      ...step.env,
      PATH: process.env.PATH,
      HOME: at.cwd,
      TOKEN: 'ghs_the_jobs_token',
      GITHUB_SERVER_URL: r.root,
      GITHUB_REPOSITORY: 'acme/demo',
      GITHUB_REF: 'refs/heads/main',
      GITHUB_SHA: r.base,
      GIT_CONFIG_NOSYSTEM: '1',
      ...more,
    },
  });
}

function validate(file: string, r: ReturnType<typeof repository>, land: string) {
  const cwd = mkdtempSync(join(r.root, 'job-'));
  return runStep(file, { job: 'validate', step: VALIDATE, cwd }, r, {
    HEAD_SHA: r.head,
    BASE_SHA: r.base,
    STACK: r.s1,
    LAND_SHA: land,
  });
}

describe("the validate job takes only yoke's pinned tree (LD03)", () => {
  const r = repository();
  it.each(TEMPLATES)('LD03 %s checks out the land commit yoke built', (file) => {
    const ok = validate(file, r, r.land);
    expect(ok.stderr + ok.stdout).toBe('');
    expect(ok.status).toBe(0);
  });

  it.each(TEMPLATES)(
    "LD03 %s refuses a land commit that holds the base, the stack and the head but grew on a writer's commit",
    (file) => {
      const bad = validate(file, r, r.forged);
      expect(bad.status).toBe(1);
      expect(bad.stdout.trim()).toBe(
        `land_sha ${r.forged.slice(0, 7)} is not the base with the heads merged on in order: ${r.x.slice(0, 7)} is not a merge of ${r.s1.slice(0, 7)} onto the commit below it`,
      );
    },
  );
});

/** A folder as a reused self-hosted runner leaves it: a repository whose .git the last job's contained code wrote. */
function planted(dir: string, marker: string): void {
  mkdirSync(join(dir, '.git', 'hooks'), { recursive: true });
  execFileSync('git', ['init', '-q', dir]);
  const hook = `#!/bin/sh\necho "hook ran with $TOKEN" >> ${marker}\n`;
  for (const name of ['post-checkout', 'post-merge', 'reference-transaction', 'pre-auto-gc'])
    writeFileSync(join(dir, '.git', 'hooks', name), hook, { mode: 0o755 });
  // A repository's own config can name commands too: fsmonitor runs one on every status-like command.
  execFileSync('git', ['-C', dir, 'config', 'core.fsmonitor', `echo "fsmonitor ran with $TOKEN" >> ${marker}; true`]);
}

describe('a job on a reused runner runs no hook the last job planted (TR44)', () => {
  const r = repository();
  it.each(TEMPLATES)(
    "TR44 %s: the agent job's checkout and the validate job's run no planted .git/hooks or fsmonitor, so the token reaches nothing",
    (file) => {
      const marker = join(r.root, `marker-${file.replace(/\W/g, '-')}`);
      const work = mkdtempSync(join(r.root, 'runner-work-'));
      planted(work, marker);
      const agent = runStep(file, { job: 'agent', step: WORK, cwd: work }, r, { REF: r.head });
      expect(agent.stderr).toBe('');
      expect(agent.status).toBe(0);
      const job = mkdtempSync(join(r.root, 'runner-validate-'));
      planted(join(job, 'pr'), marker);
      const v = runStep(file, { job: 'validate', step: VALIDATE, cwd: job }, r, {
        HEAD_SHA: r.head,
        BASE_SHA: r.base,
        STACK: r.s1,
        LAND_SHA: '',
      });
      expect(v.stderr).toBe('');
      expect(v.status).toBe(0);
      expect(existsSync(marker) ? readFileSync(marker, 'utf8') : '').toBe('');
    },
  );
});
