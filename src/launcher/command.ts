import { spawn, type ChildProcess } from 'node:child_process';
import {
  createWriteStream,
  mkdirSync,
  type WriteStream,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
} from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { blockedLines, startCommandNetwork, type CommandNetwork } from '../agent/contain/command-network.js';
import { loopbackPort } from '../config/setting-parsers.js';
import type { CommandNetworkAllow } from '../config/setting-parsers.js';
import { commandFolders, commandView, pidNamespaceArgv, storeFiles, type NetworkBridge } from '../kernel/bubblewrap.js';
import type { RepoRef } from '../forge/types.js';
import type { Run, RunKind } from '../store/fleet/runs.js';
import { launchEnv, type Launcher, type LaunchSpec, type Liveness } from './launcher.js';

// Runs as a local child process (one host, or the sandbox). TR06: the child
// gets an allowlisted environment (never yoke's app key, webhook secret,
// operator tokens or database path), its run facts and, except for landers,
// a per-run secret. It is killed with its whole process group, and anything
// it left behind, escalating from SIGTERM to SIGKILL. TR02: a lander's
// verdict is its exit code, which yoke reads itself; the code it judges never
// holds the power to report.

/** The variables a child inherits from yoke's environment; nothing else crosses. */
export const CHILD_ENV_ALLOWLIST = [
  'PATH',
  'HOME',
  'LANG',
  'LC_ALL',
  'LC_CTYPE',
  'TZ',
  'TMPDIR',
  'USER',
  'LOGNAME',
  'SHELL',
  'TERM',
] as const;

export interface ProcessExit {
  code: number | null;
  signal: string | null;
  /** The end of the run's output, for a lander's verdict summary. */
  outputTail: string;
}

/**
 * TR06: what a run started by this launcher may reach. It runs under bubblewrap in a pid namespace of
 * its own (yoke's process, its environ and its memory out of sight, and nothing it starts outliving it),
 * sees every folder read-only but its own working folder, a scratch /tmp and the folders the operator
 * names, and never yoke's app key, store, env file, other runs' logs or a host socket under /run.
 */
export interface RunContainment {
  bwrap: string;
  /** Files shown empty: the app key's file, the store's, yoke's .env. */
  hideFiles: string[];
  /** Folders shown empty: the runs' logs. */
  hide: string[];
  /** Folders the run may write besides its own (YOKE_COMMAND_WRITABLE). */
  writable: string[];
  /** What it may reach on the network besides the yoke API it reports to (YOKE_COMMAND_NETWORK_ALLOW). */
  network: CommandNetworkAllow;
}

/** A run's containment from yoke's settings: the key's file, the store's files, the .env yoke may read, the runs' logs. */
export function runContainmentOf(
  settings: { dbPath: string; commandWritable: readonly string[]; commandNetwork: CommandNetworkAllow },
  env: Record<string, string | undefined>,
  cwd = process.cwd(),
): RunContainment {
  const files = [env.PRIVATE_KEY_PATH, settings.dbPath, join(cwd, '.env')].filter((p): p is string => Boolean(p));
  // bubblewrap hides a folder that exists: the runs' logs folder is made now (the launcher writes there anyway).
  const logs = resolve(cwd, `${settings.dbPath}.runs`);
  mkdirSync(logs, { recursive: true });
  return {
    bwrap: env.YOKE_BWRAP || 'bwrap',
    hideFiles: [...new Set(files.flatMap((f) => storeFiles(resolve(cwd, f))))],
    hide: [logs],
    writable: [...settings.commandWritable],
    network: settings.commandNetwork,
  };
}

/** bubblewrap's arguments for one run, then its command: pure, the tests read it. */
export function runArgv(
  c: RunContainment,
  cwd: string,
  command: string,
  /** The run's network bridge (or the machine's, `host`), and the environment yoke started with. */
  at: { net: NetworkBridge | 'host'; env?: Record<string, string | undefined> },
): string[] {
  const { net, env = process.env } = at;
  // The operator's own command (YOKE_COMMAND): its files show wherever they lie, a checkout under /tmp included.
  const view = commandView({ cwd, own: commandFolders(command), ...c, homes: [env.HOME, homedir()], path: env.PATH });
  return pidNamespaceArgv(view, cwd, command, net);
}

export interface CommandLauncherOptions {
  command: string;
  /** The run's working folder; by default one of its own, made at start and removed at its end. */
  cwd?: string;
  /** How each run is contained; null runs it as yoke's user, seeing what yoke sees (the operator's choice, or a test's). */
  contain: RunContainment | null;
  /** Where each run's output goes, as <run id>.log. */
  logDir?: string;
  /** Variables the operator gives every run explicitly (not taken from yoke's own environment). */
  extraEnv?: Record<string, string>;
  /** Told when a run's process has exited and its output is flushed. */
  onExit?: (runId: string, kind: RunKind, exit: ProcessExit) => void;
  /** How long a cancelled process has between SIGTERM and SIGKILL. */
  killGraceMs?: number;
  /** The environment the allowlist draws from (yoke's own, by default). */
  parentEnv?: Record<string, string | undefined>;
}

const TAIL = 3000;

/** The process's start time in clock ticks since boot (field 22 of /proc/<pid>/stat), or null. */
export function processStartTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count from the last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

/** Every process that carries this run's id in its environment: a run's descendants, even those that left its group. */
export function processesOfRun(runId: string): number[] {
  const tag = `YOKE_RUN_ID=${runId}\0`;
  const out: number[] = [];
  let entries: string[] = [];
  try {
    entries = readdirSync('/proc');
  } catch {
    return out;
  }
  for (const name of entries) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (`${readFileSync(`/proc/${name}/environ`, 'latin1')}\0`.includes(tag)) out.push(Number(name));
    } catch {
      /* gone, or not ours to read */
    }
  }
  return out;
}

const signal = (pid: number, sig: NodeJS.Signals): void => {
  try {
    process.kill(pid, sig);
  } catch {
    /* already gone */
  }
};

export function parseCommandRef(ref: string | null): { pid: number; startTime: string | null } | null {
  const m = /^pid:(\d+)(?::(\d+))?$/.exec(ref ?? '');
  return m ? { pid: Number(m[1]), startTime: m[2] ?? null } : null;
}

export class CommandLauncher implements Launcher {
  readonly name = 'command' as const;
  private children = new Map<string, ChildProcess>();
  private exits = new Map<string, string>();
  private timers = new Set<NodeJS.Timeout>();

  constructor(private readonly opts: CommandLauncherOptions) {}

  usesSecret(kind: RunKind): boolean {
    return kind !== 'lander';
  }

  pendingRef(): null {
    return null;
  }

  /** The child's environment: the allowlist, the operator's extras, the run's facts. */
  childEnv(spec: LaunchSpec): Record<string, string> {
    const parent = this.opts.parentEnv ?? process.env;
    const env: Record<string, string> = {};
    for (const name of CHILD_ENV_ALLOWLIST) if (parent[name] !== undefined) env[name] = parent[name]!;
    return { ...env, ...this.opts.extraEnv, ...launchEnv(spec) };
  }

  async start(spec: LaunchSpec): Promise<{ ref: string | null }> {
    let out: 'ignore' | 'pipe' = 'ignore';
    if (this.opts.logDir) {
      mkdirSync(this.opts.logDir, { recursive: true });
      out = 'pipe';
    }
    const own = this.opts.cwd ? null : mkdtempSync(join(tmpdir(), `yoke-run-${spec.runId.replace(/[^\w-]/g, '')}-`));
    const cwd = this.opts.cwd ?? own!;
    const c = this.opts.contain;
    // Its own network: the yoke API it reports to, and what the operator allows (TR06).
    const apiPort = loopbackPort(spec.apiUrl);
    const net: CommandNetwork | null =
      c?.network.kind === 'own' ? await startCommandNetwork(c.network, apiPort === null ? [] : [apiPort]) : null;
    const child = c
      ? spawn(
          c.bwrap,
          runArgv(c, cwd, this.opts.command, { net: net ?? 'host', env: this.opts.parentEnv ?? process.env }),
          {
            cwd,
            detached: true,
            stdio: ['ignore', out, out],
            env: { ...this.childEnv(spec), TMPDIR: '/tmp', ...net?.env },
          },
        )
      : spawn(this.opts.command, {
          shell: true,
          cwd,
          detached: true,
          stdio: ['ignore', out, out],
          env: this.childEnv(spec),
        });
    if (own) child.once('close', () => rmSync(own, { recursive: true, force: true }));
    let tail = '';
    let log: WriteStream | null = null;
    if (out === 'pipe' && this.opts.logDir) {
      log = createWriteStream(join(this.opts.logDir, `${spec.runId}.log`));
      const keep = (chunk: Buffer) => {
        tail = (tail + chunk.toString('utf8')).slice(-TAIL);
      };
      child.stdout?.on('data', keep);
      child.stderr?.on('data', keep);
      child.stdout?.pipe(log, { end: false });
      child.stderr?.pipe(log, { end: false });
    }
    try {
      await new Promise<void>((resolve, reject) => {
        child.once('spawn', resolve);
        child.once('error', reject);
      });
    } catch (err) {
      log?.end();
      await net?.close();
      throw err;
    }
    const pid = child.pid!;
    this.children.set(spec.runId, child);
    child.once('close', (code, sig) => {
      // What the run tried to reach and was refused is said in its own output, where its log is read.
      const refused = blockedLines(net?.blocked() ?? [])
        .map((l) => `${l}\n`)
        .join('');
      tail = (tail + refused).slice(-TAIL);
      log?.end(refused);
      void net?.close();
      this.exits.set(spec.runId, sig ? `killed by ${sig}` : `exit code ${code}`);
      this.children.delete(spec.runId);
      // Nothing the run started outlives its slot.
      this.terminate(spec.runId, pid);
      this.opts.onExit?.(spec.runId, spec.kind, { code, signal: sig, outputTail: tail });
    });
    return { ref: `pid:${pid}:${processStartTime(pid) ?? 0}` };
  }

  async liveness(run: Run): Promise<Liveness> {
    const exit = this.exits.get(run.id);
    if (exit) return { state: 'ended', detail: exit };
    if (this.children.has(run.id)) return { state: 'running' };
    const ref = parseCommandRef(run.launcherRef);
    if (!ref) return { state: 'never_started', detail: 'the process was never started' };
    // Started by an earlier yoke process: the pid counts only if it is still the same process.
    const now = processStartTime(ref.pid);
    if (now === null) return { state: 'ended', detail: 'process is gone' };
    if (ref.startTime !== null && ref.startTime !== '0' && now !== ref.startTime)
      return { state: 'ended', detail: `pid ${ref.pid} now belongs to another process` };
    return { state: 'running' };
  }

  async cancel(run: Run, _repo: RepoRef): Promise<void> {
    const ref = parseCommandRef(run.launcherRef);
    const pid = this.children.get(run.id)?.pid ?? ref?.pid;
    this.terminate(run.id, pid ?? null, ref?.startTime ?? null);
  }

  /**
   * SIGTERM to the run's process group and to every process tagged with its
   * run id, then SIGKILL to whatever is left after the grace period.
   */
  private terminate(runId: string, pid: number | null, startTime: string | null = null): void {
    const samePid = pid !== null && (startTime === null || startTime === '0' || processStartTime(pid) === startTime);
    const send = (sig: NodeJS.Signals) => {
      if (samePid && pid) signal(-pid, sig);
      for (const p of processesOfRun(runId)) signal(p, sig);
    };
    send('SIGTERM');
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      send('SIGKILL');
    }, this.opts.killGraceMs ?? 10_000);
    timer.unref();
    this.timers.add(timer);
  }

  /** Kills every child this process started (shutdown). */
  killAll(): void {
    for (const [runId, child] of this.children) this.terminate(runId, child.pid ?? null);
  }
}
