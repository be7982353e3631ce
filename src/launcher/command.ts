import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { RepoRef } from '../forge/types.js';
import type { Run } from '../store/runs.js';
import { launchEnv, type Launcher, type LaunchSpec, type Liveness } from './launcher.js';

// Runs as a local child process (one host, or the sandbox). The run's facts
// and its per-run secret are in its environment; it is killed at the deadline.

export interface CommandLauncherOptions {
  command: string;
  cwd?: string;
  /** Where each run's output goes, as <run id>.log. */
  logDir?: string;
  extraEnv?: Record<string, string>;
  /** Told when a child exits, so the reaper can run at once. */
  onExit?: (runId: string) => void;
}

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
};

export class CommandLauncher implements Launcher {
  readonly name = 'command' as const;
  readonly usesSecret = true;
  private children = new Map<string, ChildProcess>();
  private exits = new Map<string, string>();

  constructor(private readonly opts: CommandLauncherOptions) {}

  pendingRef(): null {
    return null;
  }

  async start(spec: LaunchSpec): Promise<{ ref: string | null }> {
    let out: 'ignore' | 'pipe' = 'ignore';
    if (this.opts.logDir) {
      mkdirSync(this.opts.logDir, { recursive: true });
      out = 'pipe';
    }
    const child = spawn(this.opts.command, {
      shell: true,
      cwd: this.opts.cwd,
      detached: true,
      stdio: ['ignore', out, out],
      env: { ...process.env, ...this.opts.extraEnv, ...launchEnv(spec) },
    });
    if (out === 'pipe' && this.opts.logDir) {
      const log = createWriteStream(join(this.opts.logDir, `${spec.runId}.log`));
      child.stdout?.pipe(log);
      child.stderr?.pipe(log);
    }
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', reject);
    });
    this.children.set(spec.runId, child);
    child.once('exit', (code, signal) => {
      this.exits.set(spec.runId, signal ? `killed by ${signal}` : `exit code ${code}`);
      this.children.delete(spec.runId);
      this.opts.onExit?.(spec.runId);
    });
    return { ref: `pid:${child.pid}` };
  }

  async liveness(run: Run): Promise<Liveness> {
    const exit = this.exits.get(run.id);
    if (exit) return { state: 'ended', detail: exit };
    if (this.children.has(run.id)) return { state: 'running' };
    const pid = /^pid:(\d+)$/.exec(run.launcherRef ?? '')?.[1];
    if (!pid) return { state: 'never_started', detail: 'the process was never started' };
    // Started by an earlier yoke process: ask the OS.
    return isAlive(Number(pid)) ? { state: 'running' } : { state: 'ended', detail: 'process is gone' };
  }

  async cancel(run: Run, _repo: RepoRef): Promise<void> {
    const pid = this.children.get(run.id)?.pid ?? Number(/^pid:(\d+)$/.exec(run.launcherRef ?? '')?.[1] ?? 0);
    if (!pid) return;
    try {
      process.kill(-pid, 'SIGTERM');
    } catch {
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        /* already gone */
      }
    }
  }

  /** Kills every child this process started (shutdown). */
  killAll(): void {
    for (const child of this.children.values()) {
      try {
        if (child.pid) process.kill(-child.pid, 'SIGTERM');
      } catch {
        /* already gone */
      }
    }
  }
}
