import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { WorkReader, WorkReaderError } from '../forge/github/work-reader.js';
import { defaultPrompt, fillPromptTemplate, PROMPT_PATH, type PromptFacts } from './prompts.js';
import type { AgentAdapter, AgentCost, AgentOutcome } from './clis/adapter.js';
import { issueDigest } from '../kernel/issue-digest.js';
import { inertTitle } from './agent-output.js';
import { readRunFacts, type RunFacts } from './facts.js';
import { tailOf } from './output.js';
import { jobSecretValues } from './secret-scan.js';
import { containmentProblem } from './contain/contain.js';
import type { BlockedAttempt } from './contain/contain-proxy.js';
import { snapshotWorkTree } from './snapshot.js';

import { writeHandover } from './handover.js';
import { installTrustedSettings, restoreSettings, type SettingsSwap } from './settings-swap.js';
import { redactSecrets } from '../kernel/redact.js';
import { agentNamed } from './clis/registry.js';
import { commandAgent, RUN_SCRIPT_PATH, secretNames } from './command.js';
import { agentPrerequisite, runAgent } from './agent-process.js';
import { errorText } from '../kernel/error-text.js';

export { snapshotWorkTree } from './snapshot.js';

// `yoke agent run`: the agent job of an AFK or fix run. It reads the work,
// builds the prompt, runs the agent headless within the run's limits, and
// commits what it changed into a bundle for the deliver job. It never pushes,
// never reports and holds no token that could: the job it runs in has a
// read-only GITHUB_TOKEN and no OIDC, and the agent's process gets not even
// that (only the allowlist and its own model credentials).

export interface RunnerIo {
  env: Record<string, string | undefined>;
  cwd: string;
  out(line: string): void;
  now(): number;
  fetch?: typeof fetch;
  /** Waits between calls to a yoke that is not listening (a test's is instant). */
  sleep?: (ms: number) => Promise<void>;
}

/** What the agent job hands the deliver job, in YOKE_OUT. */
export const AgentResultFile = z
  .object({
    outcome: z.enum(['success', 'failure']),
    summary: z.string(),
    title: z.string().optional(),
    cost: z
      .object({
        usd: z.number().nullable(),
        input_tokens: z.number(),
        output_tokens: z.number(),
        note: z.string().nullable(),
      })
      .nullable(),
    base: z.string().optional(),
    commit: z.string().optional(),
  })
  .strict();
export type AgentResultFile = z.infer<typeof AgentResultFile>;

/** BU02: what a run that failed before its agent started spent: nothing, said so, so its reservation goes back at once. */
export const NOTHING_SPENT: NonNullable<AgentResultFile['cost']> = {
  usd: 0,
  input_tokens: 0,
  output_tokens: 0,
  note: 'the agent never started',
};

export const RESULT_FILE = 'result.json';
export const BUNDLE_FILE = 'work.bundle';

/** How long before the budget deadline the agent is stopped, so the run can still report. */
export const DEADLINE_RESERVE_MS = 90_000;

const git = (cwd: string, args: string[]) => {
  const r = spawnSync('git', args, { cwd, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`git ${args[0]} failed: ${(r.stderr || r.stdout).trim()}`);
  return r.stdout.trim();
};

const usd = (c: AgentCost | null) => (c?.usd != null ? `$${c.usd.toFixed(4)}` : 'no price');

/** TR20: the connections the agent's sandbox refused, as the summary lists them. */
export function blockedLines(blocked: readonly BlockedAttempt[]): string {
  if (!blocked.length) return '';
  const shown = blocked.slice(0, 20).map((b) => `- ${b.host}, by: ${b.command}`);
  const more = blocked.length > 20 ? `\n- and ${blocked.length - 20} more` : '';
  return `\n\nThe agent's sandbox refused ${blocked.length === 1 ? 'this connection' : 'these connections'} (if the agent needs a host, add it to agent.network.allow in .github/yoke.yml):\n${shown.join('\n')}${more}`;
}

/** The summary yoke shows for a run: what the agent said, why it failed, and what its sandbox refused. */
export function runSummary(
  agent: string,
  o: AgentOutcome,
  extra: string | null = null,
  blocked: readonly BlockedAttempt[] = [],
): string {
  const head = o.ok ? `${agent} finished` : `${agent} failed: ${o.reason ?? 'unknown reason'}`;
  const message = o.message.trim() ? `\n\nThe agent's last message:\n\n${tailOf(o.message, 3000)}` : '';
  // Nothing spent (the model never called) says nothing: the summary is about what happened.
  const c = o.cost;
  const cost =
    c && (c.usd !== 0 || c.inputTokens > 0 || c.outputTokens > 0)
      ? `\n\nCost: ${usd(c)} (${c.inputTokens} input, ${c.outputTokens} output tokens)${c.note ? `; ${c.note}` : ''}.`
      : '';
  // A reason that ends its own sentence gets no second full stop.
  return `${head}${/[.!?]$/.test(head) ? '' : '.'}${extra ? ` ${extra}` : ''}${message}${blockedLines(blocked)}${cost}`;
}

/** Writes result.json (and, on Actions, hands it and the bundle over as job outputs); an error when the bundle cannot be handed over. */
function writeResult(out: string, r: AgentResultFile, outputs?: string): string | null {
  mkdirSync(out, { recursive: true });
  const json = JSON.stringify(AgentResultFile.parse(r), null, 2);
  writeFileSync(join(out, RESULT_FILE), json);
  if (!outputs) return null;
  const bundle =
    r.outcome === 'success' && existsSync(join(out, BUNDLE_FILE)) ? readFileSync(join(out, BUNDLE_FILE)) : null;
  return writeHandover(outputs, json, bundle);
}

async function promptFor(
  facts: RunFacts,
  reader: WorkReader,
  cwd: string,
  env: Record<string, string | undefined>,
): Promise<{ prompt: string; title: string; issue: number }> {
  let prNumber: number | null = null;
  let issueNumber = facts.issueNumber;
  if (facts.kind === 'fix') {
    const pull = await reader.pull(facts.prNumber!);
    prNumber = pull.number;
    issueNumber = pull.closes[0] ?? null;
    if (issueNumber === null)
      throw new WorkReaderError(`PR #${pull.number} closes no issue ("Closes #N" is missing from its body)`);
  }
  const issue = await reader.issue(issueNumber!);
  // TR24: the issue must read as it was approved (labelled, or confirmed with /yoke start), title and body.
  const approved = facts.approved;
  if (approved && (approved.issue !== issue.number || issueDigest(issue.title, issue.body) !== approved.digest))
    throw new WorkReaderError(
      `issue #${issue.number} reads differently from when yoke approved its run (its title or body was edited since, or it is not #${approved.issue}), so the agent was not started. A writer's \`/yoke start\` on #${approved.issue} confirms the issue as it is now`,
    );
  const pf: PromptFacts = {
    kind: facts.kind === 'fix' ? 'fix' : 'afk',
    repo: facts.repo,
    issueNumber: issue.number,
    issueTitle: issue.title,
    issueBody: issue.body,
    issueAuthor: issue.author,
    issueAuthorTrusted: issue.authorTrusted,
    comments: issue.comments.filter((c) => c.trusted),
    leftOut: issue.comments.filter((c) => !c.trusted).length,
    prNumber,
    rejection: facts.rejection,
    asks: facts.asks,
  };
  // The repository's prompt, from the commit the workflow was dispatched on (never the PR's own edit of it).
  const trusted = env.GITHUB_SHA
    ? spawnSync('git', ['show', `${env.GITHUB_SHA}:${PROMPT_PATH}`], { cwd, encoding: 'utf8' })
    : null;
  const template = trusted?.status === 0 ? trusted.stdout : null;
  if (template === null) return { prompt: defaultPrompt(pf), title: issue.title, issue: issue.number };
  const filled = fillPromptTemplate(template, pf);
  if (!filled.ok) throw new WorkReaderError(filled.error);
  return { prompt: filled.prompt, title: issue.title, issue: issue.number };
}

/** An agent of your own: .github/yoke/run.sh from the commit the workflow was dispatched on, never a PR's edit of it. */
function ownAgent(cwd: string, env: Record<string, string | undefined>): AgentAdapter | { error: string } {
  if (!env.GITHUB_SHA)
    return {
      error: `GITHUB_SHA is not set: the runner reads ${RUN_SCRIPT_PATH} from the commit the workflow was dispatched on`,
    };
  const shown = spawnSync('git', ['show', `${env.GITHUB_SHA}:${RUN_SCRIPT_PATH}`], { cwd, encoding: 'utf8' });
  if (shown.status !== 0)
    return {
      error: `${RUN_SCRIPT_PATH} is not on the default branch at ${env.GITHUB_SHA.slice(0, 7)}: commit your agent's script there (or name a shipped agent: claude-code or codex)`,
    };
  const names = secretNames(env.YOKE_AGENT_SECRETS);
  if ('error' in names) return names;
  return commandAgent(shown.stdout, names.names);
}

/** What a run starts from: its facts, the checkout and its base, the agent and the work it is given. */
interface Start {
  f: RunFacts;
  cwd: string;
  base: string;
  agent: AgentAdapter;
  label: string;
  work: { prompt: string; title: string; issue: number };
}

/** Everything the agent needs before it runs, checked: what is missing is said as the failure it is. */
async function startOf(io: RunnerIo): Promise<Start | { failure: string }> {
  const facts = readRunFacts(io.env);
  if (!facts.ok) return { failure: `The runner cannot start: ${facts.error}.` };
  const cwd = io.env.GITHUB_WORKSPACE || io.cwd;
  let base: string;
  try {
    base = git(cwd, ['rev-parse', 'HEAD']);
  } catch {
    return {
      failure: `${cwd} is not a git checkout: check the repository out (actions/checkout) before yoke's runner.`,
    };
  }
  const agent = io.env.YOKE_AGENT === 'command' ? ownAgent(cwd, io.env) : agentNamed(io.env.YOKE_AGENT);
  if ('error' in agent) return { failure: `The runner cannot start: ${agent.error}.` };
  const missing = agentPrerequisite(agent, io.env);
  if (missing) return { failure: missing };
  const label = agent.name === 'command' ? RUN_SCRIPT_PATH : agent.name;
  const token = io.env.GITHUB_TOKEN;
  const apiUrl = io.env.GITHUB_API_URL ?? 'https://api.github.com';
  if (!token)
    return {
      failure:
        'GITHUB_TOKEN is not set: give the agent step `GITHUB_TOKEN: ${{ github.token }}` (read-only; the job needs `issues: read`).',
    };
  try {
    const work = await promptFor(
      facts.facts,
      new WorkReader({ apiUrl, token, repo: facts.facts.repo, ...(io.fetch ? { fetch: io.fetch } : {}) }),
      cwd,
      io.env,
    );
    return { f: facts.facts, cwd, base, agent, label, work };
  } catch (err) {
    return { failure: `The runner could not read the work: ${errorText(err)}.` };
  }
}

/** Says what its agent's tools may reach (TR39: the model through the gateway, which holds its key). */
function announceReach(io: RunnerIo, { f, agent }: Start): void {
  const modelUrl = io.env[agent.modelUrlVariable] || agent.defaultModelUrl;
  const reachable = [
    ...(modelUrl
      ? [
          `the model at ${new URL(modelUrl).host} (through yoke's gateway${agent.modelAuth(io.env) ? ', which holds its key' : ''})`,
        ]
      : []),
    ...f.limits.networkAllow,
  ];
  io.out(
    reachable.length
      ? `network: the agent's tools may reach ${reachable.join(', ')}; nothing else`
      : "network: the agent's tools may reach no host (add your model's host to agent.network.allow in .github/yoke.yml)",
  );
}

/** TR23: a fix run's agent loads the default branch's agent settings, never the ones the PR's previous agent wrote. */
function trustedSettings(io: RunnerIo, { f, cwd, base }: Start): SettingsSwap | { failure: string } | null {
  if (f.kind !== 'fix' || !io.env.GITHUB_SHA) return null;
  try {
    const swap = installTrustedSettings(cwd, base, io.env.GITHUB_SHA);
    if (swap.installed.size) io.out(`agent settings from the default branch: ${[...swap.installed.keys()].join(', ')}`);
    return swap;
  } catch (err) {
    return { failure: `The runner could not set the agent's settings from the default branch: ${errorText(err)}.` };
  }
}

/** `yoke agent run`. Exit 0 with changes bundled; 1 with a failure result written (the deliver job reports either). */
export async function agentRun(io: RunnerIo): Promise<number> {
  const out = io.env.YOKE_OUT;
  if (!out) {
    io.out(
      'YOKE_OUT is not set: name the folder the deliver job picks the result up from (the templates use $RUNNER_TEMP/yoke-out).',
    );
    return 2;
  }
  const fail = (said: string, cost: AgentResultFile['cost'] = NOTHING_SPENT) => {
    // TR38: a failure says what the agent said and which hosts it tried (names it chose): redacted like a success.
    const summary = redactSecrets(said, jobSecretValues(io.env));
    io.out(summary);
    writeResult(out, { outcome: 'failure', summary, cost }, io.env.GITHUB_OUTPUT);
    return 1;
  };
  const start = await startOf(io);
  if ('failure' in start) return fail(start.failure);
  const { f, cwd, base, agent, label, work } = start;
  io.out(
    `${label}: ${f.kind} on ${f.kind === 'fix' ? `PR #${f.prNumber}` : `issue #${work.issue}`}, at most ${f.limits.maxTurns} turns${f.limits.maxUsd !== null ? ` and $${f.limits.maxUsd}` : ''}, stopping by ${new Date(f.deadline - DEADLINE_RESERVE_MS).toISOString()}`,
  );
  // TR20: the agent's tools run contained, or not at all.
  const cannot = containmentProblem(io.env.YOKE_BWRAP || 'bwrap');
  if (cannot) return fail(`The agent's sandbox cannot start: ${cannot}`);
  announceReach(io, start);
  const swap = trustedSettings(io, start);
  if (swap && 'failure' in swap) return fail(swap.failure);
  const ran = await runAgent(agent, work.prompt, f.limits, {
    cwd,
    env: io.env,
    stopAt: f.deadline - DEADLINE_RESERVE_MS,
    now: io.now,
    log: io.out,
    contain: { allow: f.limits.networkAllow, ...(io.env.YOKE_BWRAP ? { bwrap: io.env.YOKE_BWRAP } : {}) },
  });
  for (const b of ran.blocked) io.out(`network: refused ${b.host} (${b.command})`);
  if (swap) restoreSettings(cwd, swap);
  const o = ran.outcome;
  // TR15, TR16: whatever the agent printed or wrote is checked for the values this job was given.
  const secrets = jobSecretValues(io.env);
  o.message = redactSecrets(o.message, secrets);
  const cost = o.cost
    ? { usd: o.cost.usd, input_tokens: o.cost.inputTokens, output_tokens: o.cost.outputTokens, note: o.cost.note }
    : null;
  const failed = (reason: string | null) =>
    fail(runSummary(label, reason === null ? o : { ...o, ok: false, reason }, null, ran.blocked), cost);
  if (!o.ok) return failed(null);
  mkdirSync(out, { recursive: true });
  const subject =
    f.kind !== 'fix'
      ? `${inertTitle(work.title)} (#${work.issue})`
      : f.rejection !== null
        ? `Fix the lander's rejection of #${f.prNumber}`
        : `Make the changes asked for on #${f.prNumber}`;
  const snap = snapshotWorkTree(cwd, base, {
    message: `${subject}\n\nYoke-Run: ${f.runId}`,
    bundle: join(out, BUNDLE_FILE),
    secrets,
  });
  if (snap.kind === 'unchanged') return failed('it changed nothing');
  if (snap.kind === 'secret' || snap.kind === 'refused') return failed(snap.why);
  const commit = snap.commit;
  const tooLarge = writeResult(
    out,
    {
      outcome: 'success',
      summary: redactSecrets(runSummary(label, o, null, ran.blocked), secrets),
      title: redactSecrets(work.title, secrets),
      cost,
      base,
      commit,
    },
    io.env.GITHUB_OUTPUT,
  );
  if (tooLarge) return failed(tooLarge);
  io.out(`${label} changed the tree: ${commit.slice(0, 7)} on ${base.slice(0, 7)}, bundled for delivery.`);
  return 0;
}

export function readAgentResult(out: string): AgentResultFile | { error: string } {
  const path = join(out, RESULT_FILE);
  if (!existsSync(path)) return { error: 'missing' };
  try {
    const parsed = AgentResultFile.safeParse(JSON.parse(readFileSync(path, 'utf8')));
    return parsed.success
      ? parsed.data
      : { error: `${RESULT_FILE} is not the runner's shape: ${parsed.error.issues[0]?.message}` };
  } catch {
    return { error: `${RESULT_FILE} is not JSON` };
  }
}
