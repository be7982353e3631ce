import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join, sep } from 'node:path';
import type { AgentAdapter, AgentLimits, AgentOutcome } from './clis/adapter.js';
import { tailOf } from './output.js';
import { containAgent, type Contained } from './contain/contain.js';
import type { BlockedAttempt } from './contain/contain-proxy.js';
import { cappedCost, meteredCost } from './agent-output.js';
import { priceTable } from './contain/prices.js';
import { SpendMeter } from './contain/spend-meter.js';

// The agent's own process: what it may inherit from the job, whether its CLI
// is there, and its run to its end or to a limit, contained (TR20), with its
// whole process group gone when it stops.

/** Variables of the job the agent's process may inherit; nothing else crosses (no GITHUB_TOKEN, no ACTIONS_* request tokens). */
export const AGENT_ENV_ALLOWLIST = [
  'PATH',
  'LANG',
  'LC_ALL',
  'LC_CTYPE',
  'TZ',
  'USER',
  'LOGNAME',
  'SHELL',
  'TERM',
  'CI',
] as const;

/** Where the job finds a binary on PATH, its links followed; null when it does not. */
function foundOnPath(binary: string, path: string | undefined): string | null {
  const dir = (path ?? '').split(delimiter).find((d) => d && existsSync(join(d, binary)));
  return dir ? realpathSync(join(dir, binary)) : null;
}

/**
 * Why the agent's CLI, which the job finds, cannot start inside its sandbox:
 * in the contained process's own words, with where it is installed when that
 * is under a folder the sandbox hides, and how to install it where it shows.
 */
export function notInSandbox(
  agent: Pick<AgentAdapter, 'name' | 'binary' | 'pkg'>,
  said: string,
  path: string | undefined,
  hidden: readonly string[],
): string {
  const found = foundOnPath(agent.binary, path);
  const under = found ? hidden.find((h) => found === h || found.startsWith(h + sep)) : undefined;
  const where =
    found && under
      ? ` It is installed at ${found}, under ${under}, which the sandbox hides (the job's home and temp folder hold its credentials).`
      : '';
  const how = agent.name === 'command' ? '' : ` (\`npm install -g ${agent.pkg}\` with the runner's Node)`;
  return `${agent.binary} cannot start inside the agent's sandbox: it said "${said}".${where} Install ${agent.pkg} outside those folders${how}, in a step before yoke's runner.`;
}

/** Why the agent cannot start here, naming what to install or set; null when it can. */
export function agentPrerequisite(agent: AgentAdapter, env: Record<string, string | undefined>): string | null {
  if (!foundOnPath(agent.binary, env.PATH)) {
    return `${agent.binary} is not on PATH: install ${agent.pkg} (npm install -g ${agent.pkg}) in a step before yoke's runner.`;
  }
  if (agent.credentials.length && !agent.credentials.some((c) => env[c])) {
    return `No credential for ${agent.name}: set ${agent.credentials.join(' or ')} as a repository secret (Settings → Secrets and variables → Actions) and pass it to the step's env.`;
  }
  return null;
}

/** The agent's environment: the allowlist, its credentials and passthrough variables (empty ones dropped), its own home. */
export function agentEnv(
  agent: AgentAdapter,
  env: Record<string, string | undefined>,
  home: string,
  extra: Record<string, string>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of [...AGENT_ENV_ALLOWLIST, ...agent.credentials, ...agent.passthrough])
    if (env[name]) out[name] = env[name]!;
  return { ...out, HOME: home, TMPDIR: join(home, 'tmp'), ...extra };
}

export interface AgentExit {
  outcome: AgentOutcome;
  turns: number;
  stoppedFor: 'turn_limit' | 'deadline' | 'spend_limit' | 'unmetered' | 'cancelled' | null;
  /** TR20: connections the sandbox refused, with the command that tried. */
  blocked: BlockedAttempt[];
  /** TR39: the cost as the agent's output stated it, which a tool can write; the outcome's is the gateway's count. */
  statedCost: AgentOutcome['cost'];
}

/** TR20: how the agent's tools are contained: the hosts they may reach besides the model's. */
export interface ContainSettings {
  allow: readonly string[];
  bwrap?: string;
}

/** Runs the agent to its end or to a limit; the whole process group goes when it stops. */
export async function runAgent(
  agent: AgentAdapter,
  prompt: string,
  limits: AgentLimits,
  opts: {
    cwd: string;
    env: Record<string, string | undefined>;
    stopAt: number;
    now: () => number;
    log: (l: string) => void;
    contain?: ContainSettings | null;
  },
): Promise<AgentExit> {
  const home = mkdtempSync(join(tmpdir(), 'yoke-agent-home-'));
  mkdirSync(join(home, 'tmp'), { recursive: true });
  let contained: Contained | null = null;
  let onTerm: (() => void) | null = null;
  // TR39: contained, the agent's model is reached through the gateway, which holds the key and counts what each answer billed.
  const prices = priceTable(opts.env.YOKE_MODEL_PRICES);
  let stopRun: ((why: NonNullable<AgentExit['stoppedFor']>, reason?: string) => void) | null = null;
  const meter = new SpendMeter({
    prices,
    maxUsd: limits.maxUsd,
    onSpent: (spent) => {
      if (limits.maxUsd !== null && spent > limits.maxUsd) stopRun?.('spend_limit');
    },
    // TR42: spend the meter cannot count ends the run, naming what it could not price or read.
    onStop: (why) => stopRun?.('unmetered', why),
  });
  try {
    let seen = opts.env;
    if (opts.contain) {
      const upstream = opts.env[agent.modelUrlVariable] || agent.defaultModelUrl;
      const keyed = agent.modelAuth(opts.env);
      contained = await containAgent(
        {
          workspace: opts.cwd,
          home,
          env: opts.env,
          model: upstream
            ? {
                upstream,
                api: agent.modelApi,
                auth: keyed?.auth ?? null,
                meter: agent.modelApi ? meter : null,
              }
            : null,
          allow: opts.contain.allow,
          ...(opts.contain.bwrap ? { bwrap: opts.contain.bwrap } : {}),
        },
        agent.binary,
        [],
      );
      // What the agent is told: the gateway's URL, and a placeholder where each credential the gateway holds was.
      seen = { ...opts.env };
      if (keyed) {
        for (const c of agent.credentials) delete seen[c];
        Object.assign(seen, keyed.placeholders);
      }
      if (contained.modelUrl) seen[agent.modelUrlVariable] = contained.modelUrl;
    }
    // Started once inside the sandbox before the run: a CLI the sandbox cannot see fails the run saying why, not "exit 127".
    const cannot = contained?.probe(agent.binary, agentEnv(agent, seen, home, {}));
    if (contained && cannot) {
      const reason = notInSandbox(agent, cannot, opts.env.PATH, contained.hidden);
      return {
        // BU02: the model was never called.
        outcome: { ok: false, reason, message: '', cost: { usd: 0, inputTokens: 0, outputTokens: 0, note: null } },
        turns: 0,
        stoppedFor: null,
        blocked: [],
        statedCost: null,
      };
    }
    const metered = Boolean(contained?.modelUrl && agent.modelApi);
    const inv = agent.invocation(prompt, limits, home, seen);
    for (const [file, text] of Object.entries(inv.files ?? {})) writeFileSync(join(home, file), text);
    const env = agentEnv(agent, seen, home, inv.env);
    if (contained) {
      contained.args.push(...inv.args);
      Object.assign(env, contained.env);
    }
    const child = contained
      ? spawn(contained.command, contained.args, {
          cwd: opts.cwd,
          env,
          detached: true,
          stdio: ['ignore', 'pipe', 'pipe'],
        })
      : spawn(agent.binary, inv.args, { cwd: opts.cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let pending = '';
    let turns = 0;
    const answers = new Set<string>();
    let stoppedFor: AgentExit['stoppedFor'] = null;
    let stopReason: string | null = null;
    const stop = (why: NonNullable<AgentExit['stoppedFor']>, reason?: string) => {
      if (stoppedFor) return;
      stoppedFor = why;
      stopReason = reason ?? null;
      opts.log(`stopping ${agent.name}: ${reason ?? why.replace('_', ' ')}`);
      try {
        process.kill(-child.pid!, 'SIGTERM');
      } catch {
        /* gone */
      }
      setTimeout(() => {
        try {
          process.kill(-child.pid!, 'SIGKILL');
        } catch {
          /* gone */
        }
      }, 5000).unref();
    };
    stopRun = stop;
    if (meter.stopped) stop('unmetered', meter.stopped);
    child.stdout.on('data', (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      stdout += text;
      pending += text;
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        const ev = agent.parseLine(line);
        // E: a turn is one model answer, however many events (content blocks) it came in.
        if (ev?.turn && !(ev.turnId && answers.has(ev.turnId))) {
          if (ev.turnId) answers.add(ev.turnId);
          if (++turns > limits.maxTurns) stop('turn_limit');
        }
        // Unless the gateway counts its answers, an agent with no spend limit of its own (Codex, one of your own) is checked whenever its output prices it.
        if (!metered && ev?.priced && limits.maxUsd !== null) {
          const so = agent.outcome(stdout, { code: 0, signal: null }, opts.env).cost;
          if (so?.usd != null && so.usd > limits.maxUsd) stop('spend_limit');
        }
      }
    });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => {
      stderr = (stderr + c.toString('utf8')).slice(-4000);
    });
    const timer = setTimeout(() => stop('deadline'), Math.max(0, opts.stopAt - opts.now()));
    // A cancelled or timed-out job sends the runner SIGINT, then SIGTERM: the agent goes with it, never left calling the model.
    onTerm = () => stop('cancelled');
    process.once('SIGTERM', onTerm);
    process.once('SIGINT', onTerm);
    const exit = await new Promise<{ code: number | null; signal: string | null }>((resolve) => {
      child.once('error', () => resolve({ code: 127, signal: null }));
      child.once('close', (code, signal) => resolve({ code, signal }));
    });
    clearTimeout(timer);
    try {
      process.kill(-child.pid!, 'SIGKILL'); // nothing it started outlives it
    } catch {
      /* gone */
    }
    const stated = agent.outcome(stdout, exit, opts.env);
    // TR37: contained, a figure the agent's output states may be a tool's: never recorded past the limit. Uncontained (tests only), it is the CLI's.
    const outcome = metered
      ? { ...stated, cost: meteredCost(contained!.answers(), stated.cost, prices, limits.maxUsd) }
      : contained && stated.cost
        ? { ...stated, cost: cappedCost(stated.cost, limits.maxUsd) }
        : stated;
    if (!outcome.ok && !outcome.message && stderr.trim()) outcome.message = tailOf(stderr, 1500);
    const blocked = contained?.blocked() ?? [];
    for (const r of contained?.refused() ?? []) opts.log(`the model gateway refused ${r.request}: ${r.why}`);
    const why = {
      turn_limit: `turn limit: stopped after ${limits.maxTurns} turns`,
      deadline: "deadline: stopped before the run's budget deadline",
      spend_limit: `spend limit: stopped past $${limits.maxUsd}`,
      unmetered: `unmetered spend: ${stopReason ?? ''}`,
      cancelled: 'cancelled: the job was stopped',
    } as const;
    const statedCost = stated.cost;
    if (stoppedFor)
      return { outcome: { ...outcome, ok: false, reason: why[stoppedFor] }, turns, stoppedFor, blocked, statedCost };
    return { outcome, turns, stoppedFor, blocked, statedCost };
  } finally {
    if (onTerm) {
      process.off('SIGTERM', onTerm);
      process.off('SIGINT', onTerm);
    }
    await contained?.close();
    rmSync(home, { recursive: true, force: true });
  }
}
