import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ATTACK_TASK, DEMO_TASKS, migrationPath, type DemoTask } from '../demo-repo.js';
import { requireEnv } from './env.js';

// The command launcher's demo agent, lander and fixer: what a real agent
// would do, in miniature, as a local process with a per-run secret (it clones
// by itself). On Actions the demo runs demo-agent.mjs behind
// templates/yoke-run.yml instead, contained, and yoke's runner delivers.

const env = requireEnv;

const runId = env('YOKE_RUN_ID');
const kind = env('YOKE_RUN_KIND');
const subject = env('YOKE_SUBJECT');
const apiUrl = env('YOKE_API_URL');
const ghApi = env('GITHUB_API_URL');
const ghToken = process.env.GH_TOKEN ?? env('GITHUB_TOKEN');
const repo = process.env.YOKE_REPO ?? env('GITHUB_REPOSITORY');
const number = Number(subject.split('#')[1]);

const log = (msg: string) => console.log(`[${kind} ${runId}] ${msg}`);

async function gh<T>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${ghApi}${path}`, {
    method,
    headers: {
      authorization: `token ${ghToken}`,
      accept: 'application/vnd.github+json',
      'content-type': 'application/json',
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return (res.status === 204 ? undefined : await res.json()) as T;
}

/** What the demo agent says a run cost: a fixed price per kind of work, as a metered model would bill it. */
const DEMO_COST = {
  afk: { usd: 0.42, input_tokens: 18_000, output_tokens: 2_400 },
  fix: { usd: 0.17, input_tokens: 7_500, output_tokens: 900 },
} as const;

type Cost = (typeof DEMO_COST)[keyof typeof DEMO_COST];

async function report(result: {
  outcome: 'success' | 'failure';
  verdict?: 'accept' | 'reject';
  summary: string;
  cost?: Cost;
}): Promise<void> {
  const bearer = env('YOKE_RUN_SECRET');
  const res = await fetch(`${apiUrl}/yoke/api/runs/${runId}/result`, {
    method: 'POST',
    headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
    body: JSON.stringify(result),
  });
  if (!res.ok) throw new Error(`yoke refused the report: ${res.status} ${await res.text()}`);
  log(`reported ${result.outcome}${result.verdict ? ` (${result.verdict})` : ''}`);
}

const sh = (cwd: string, cmd: string, args: string[]) =>
  execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

const GIT_ID = ['-c', 'user.name=demo-agent', '-c', 'user.email=agent@yoke.invalid'];

/** The working copy: a fresh clone. */
function workingCopy(ref: string | undefined): string {
  const dir = mkdtempSync(join(tmpdir(), `yoke-${runId}-`));
  sh(dir, 'git', ['clone', '--quiet', env('YOKE_SANDBOX_GIT_URL'), '.']);
  if (ref) sh(dir, 'git', ['checkout', '--quiet', ref]);
  return dir;
}

function taskOf(body: string): DemoTask {
  const name = /demo-task: ([\w-]+)/.exec(body)?.[1];
  const task = [...DEMO_TASKS, ATTACK_TASK].find((t) => t.name === name);
  if (!task) throw new Error(`issue #${number} names no demo task`);
  return task;
}

function writeTask(dir: string, task: DemoTask, impl: string, fixed = false): void {
  mkdirSync(join(dir, 'lib'), { recursive: true });
  writeFileSync(join(dir, 'lib', `${task.name}.js`), impl);
  writeFileSync(join(dir, 'test', `${task.name}.test.js`), task.test);
  // LD02: the task's migration, numbered 002; a repair renumbers it to 003 (another PR's 002 landed first).
  if (task.migration) {
    mkdirSync(join(dir, 'migrations'), { recursive: true });
    if (fixed) rmSync(join(dir, migrationPath(task, false)), { force: true });
    writeFileSync(join(dir, migrationPath(task, fixed)), task.migration);
  }
}

/** --fail-agent N: the first N AFK runs fail, so three strikes can be seen. */
function shouldFail(): boolean {
  const limit = Number(process.env.YOKE_SANDBOX_FAIL_AGENT ?? 0);
  if (!limit) return false;
  const file = join(env('YOKE_SANDBOX_STATE'), 'agent-failures');
  const done = existsSync(file) ? Number(readFileSync(file, 'utf8')) : 0;
  if (done >= limit) return false;
  writeFileSync(file, String(done + 1));
  return true;
}

async function afk(): Promise<void> {
  const delay = Number(process.env.YOKE_SANDBOX_AGENT_DELAY_MS ?? 0);
  if (delay) await new Promise((r) => setTimeout(r, delay));
  if (shouldFail()) {
    await report({ outcome: 'failure', summary: 'the demo agent was told to fail (--fail-agent)' });
    process.exit(1);
  }
  const issue = await gh<{ title: string; body: string }>('GET', `/repos/${repo}/issues/${number}`);
  const task = taskOf(issue.body);
  const dir = workingCopy(undefined);
  const branch = `yoke/issue-${number}`;
  sh(dir, 'git', ['checkout', '--quiet', '-B', branch]);
  writeTask(dir, task, task.broken ?? task.impl);
  for (const [file, content] of Object.entries(task.extraFiles ?? {})) {
    mkdirSync(join(dir, file, '..'), { recursive: true });
    writeFileSync(join(dir, file), content);
  }
  sh(dir, 'git', ['add', '-A']);
  sh(dir, 'git', [...GIT_ID, 'commit', '--quiet', '-m', `${task.title} (#${number})`]);
  sh(dir, 'git', ['push', '--quiet', '--force', 'origin', `HEAD:refs/heads/${branch}`]);
  const pr = await gh<{ number: number }>('POST', `/repos/${repo}/pulls`, {
    title: task.title,
    head: branch,
    base: 'main',
    body: `Closes #${number}\n\nAdds \`lib/${task.name}.js\` and its test.\n\nYoke-Run: ${runId}`,
  });
  log(`opened claim PR #${pr.number}`);
  await report({ outcome: 'success', summary: `opened #${pr.number}`, cost: DEMO_COST.afk });
}

/**
 * The command launcher's lander (TR02): it holds no run secret and reports
 * nothing. It validates the PR's head merged onto the base yoke named (LD01),
 * after the heads stacked ahead of it (LD05), with the default branch's script, and its exit code is the verdict yoke
 * records: 0 accept, 1 reject (a head that does not merge onto the base too).
 */
async function lander(): Promise<void> {
  const base = process.env.YOKE_BASE_SHA;
  const land = process.env.YOKE_LAND_SHA;
  const dir = workingCopy(land || base || env('YOKE_HEAD_SHA'));
  if (land) {
    // LD03: the commit yoke built to land, as it is: the base with the stack's heads and its own merged on in order.
    const heads = [...(process.env.YOKE_STACK ?? '').split(' ').filter(Boolean), env('YOKE_HEAD_SHA')];
    let at = sh(dir, 'git', ['rev-parse', 'HEAD']);
    for (const want of heads.reverse()) {
      const [, first, second, ...extra] = sh(dir, 'git', ['rev-list', '--parents', '-n1', at]).split(' ');
      if (!first || second !== sh(dir, 'git', ['rev-parse', want]) || extra.length)
        throw new Error(`${land} is not the base with the heads merged on in order: ${at} is not a merge of ${want}`);
      at = first;
    }
    if (at !== sh(dir, 'git', ['rev-parse', base!])) throw new Error(`${land} does not grow from the base ${base}`);
  } else if (base) {
    // LD05: the heads of the claim PRs stacked ahead of this one, then its own, merged onto the base in order.
    const stack = (process.env.YOKE_STACK ?? '').split(' ').filter(Boolean);
    for (const sha of [...stack, env('YOKE_HEAD_SHA')]) {
      const before = sh(dir, 'git', ['rev-parse', 'HEAD']);
      try {
        sh(dir, 'git', [...GIT_ID, 'merge', '--quiet', '--no-ff', '--no-edit', sha]);
      } catch {
        console.log(
          sha === env('YOKE_HEAD_SHA')
            ? `The PR's head does not merge cleanly onto ${base.slice(0, 7)}${stack.length ? ' with the claim PRs stacked ahead of it' : ''}, the tree it would land on.`
            : `${sha.slice(0, 7)}, stacked ahead of this PR, does not merge cleanly onto ${base.slice(0, 7)}.`,
        );
        process.exit(1);
      }
      if (sh(dir, 'git', ['rev-parse', 'HEAD^1']) !== before) throw new Error(`did not merge onto ${before}`);
    }
  } else if (sh(dir, 'git', ['rev-parse', 'HEAD']) !== env('YOKE_HEAD_SHA'))
    throw new Error(`checked out ${sh(dir, 'git', ['rev-parse', 'HEAD'])}, not ${env('YOKE_HEAD_SHA')}`);
  const script = sh(dir, 'git', ['show', 'origin/main:.github/yoke/validate.sh']);
  try {
    // The judged code gets no token of any kind: only PATH and HOME cross.
    const clean = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? dir };
    console.log(
      execFileSync('bash', ['-c', script], {
        cwd: dir,
        env: clean,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      }).trim(),
    );
    process.exit(0);
  } catch (err) {
    console.log(String((err as { stdout?: string }).stdout ?? err).trim());
    process.exit(1);
  }
}

async function fix(): Promise<void> {
  const pull = await gh<{ head: { ref: string; sha: string }; body: string }>('GET', `/repos/${repo}/pulls/${number}`);
  const issueNumber = Number(/Closes #(\d+)/.exec(pull.body)?.[1]);
  const issue = await gh<{ body: string }>('GET', `/repos/${repo}/issues/${issueNumber}`);
  const task = taskOf(issue.body);
  const dir = workingCopy(pull.head.sha);
  sh(dir, 'git', ['checkout', '--quiet', '-B', pull.head.ref]);
  writeTask(dir, task, task.impl, true);
  sh(dir, 'git', ['add', '-A']);
  sh(dir, 'git', [...GIT_ID, 'commit', '--quiet', '--allow-empty', '-m', `Fix ${task.name} after the lander's reject`]);
  sh(dir, 'git', ['push', '--quiet', 'origin', `HEAD:refs/heads/${pull.head.ref}`]);
  log(`pushed a fix to ${pull.head.ref}`);
  await report({ outcome: 'success', summary: `fixed lib/${task.name}.js`, cost: DEMO_COST.fix });
}

const work = kind === 'lander' ? lander : kind === 'fix' ? fix : afk;
work().catch(async (err) => {
  log(`failed: ${err instanceof Error ? err.message : String(err)}`);
  // A lander has nothing to report with; an exit code other than 0 or 1 is no verdict.
  if (kind === 'lander') process.exit(2);
  await report({ outcome: 'failure', summary: String(err).slice(0, 2000) }).catch(() => undefined);
  process.exit(1);
});
