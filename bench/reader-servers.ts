import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import type { ServerAsk, ServerReport, ServerStart } from './reader-server.js';
import type { Fleet } from './scale.js';

// The readers bench's yoke servers, each a process of its own (bench/reader-server.ts), driven over IPC.

type Pending = { resolve: (v: unknown) => void; reject: (e: Error) => void };

export class ServerProcess {
  private readonly pending = new Map<number, Pending>();
  private next = 1;
  private constructor(private readonly child: ChildProcess) {
    child.on('message', (msg: { id: number; value?: unknown; error?: string }) => {
      const p = this.pending.get(msg.id);
      if (!p) return;
      this.pending.delete(msg.id);
      if (msg.error !== undefined) p.reject(new Error(`reader server: ${msg.error}`));
      else p.resolve(msg.value);
    });
    child.on('exit', (code) => {
      for (const p of this.pending.values()) p.reject(new Error(`reader server exited ${code}`));
      this.pending.clear();
    });
  }

  /** Starts a server on the fleet's GitHub and the store at `storeUrl`; resolves once it runs. */
  static start(fleet: Fleet, storeUrl: string): Promise<ServerProcess> {
    const start: ServerStart = {
      forgeUrl: fleet.forge.url,
      privateKey: fleet.privateKey,
      storeUrl,
      offset: fleet.clock.offset,
    };
    const child = fork(join(import.meta.dirname, 'reader-server.ts'), [JSON.stringify(start)], {
      execArgv: ['--import', import.meta.resolve('tsx')],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const server = new ServerProcess(child);
    return new Promise((resolve, reject) => {
      server.pending.set(0, { resolve: () => resolve(server), reject });
    });
  }

  private ask<T>(ask: ServerAsk): Promise<T> {
    const id = this.next++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: (v) => resolve(v as T), reject });
      this.child.send({ id, ask });
    });
  }

  fire(at: number, offset: number): Promise<void> {
    return this.ask({ op: 'fire', at, offset });
  }
  /** Whether its pass lock is free with nothing queued behind it, once the lock was taken and given back. */
  quiet(): Promise<boolean> {
    return this.ask({ op: 'quiet' });
  }
  report(reset = false): Promise<ServerReport> {
    return this.ask({ op: 'report', reset });
  }
  /** One scheduler tick, waited for: its wall time and this process's CPU in it. */
  pass(): Promise<{ ms: number; cpuUs: number }> {
    return this.ask({ op: 'pass' });
  }
  relist(installationId: number): Promise<void> {
    return this.ask({ op: 'relist', installationId });
  }
  async stop(): Promise<void> {
    const exited = new Promise((r) => this.child.once('exit', r));
    await this.ask({ op: 'stop' }).catch(() => {});
    // A server whose stop left a handle open is ended: the bench's figures are taken.
    const kill = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(kill);
  }
}
