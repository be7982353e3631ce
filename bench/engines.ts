import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findPostgresBin, startPostgres, type LocalPostgres } from '../sandbox/postgres.js';
import { openStoreAt, type Store } from '../src/store/store.js';

// The store engines a figure is measured on: SQLite (a file, or :memory:),
// and, when PostgreSQL is installed, a real one on loopback started here.
// A figure's name carries `_postgres` when it was measured on PostgreSQL.

export interface BenchEngine {
  name: 'sqlite' | 'postgres';
  suffix: string;
  /** A fresh, migrated store (`file`: on SQLite, a file in a temp folder rather than :memory:). */
  open(opts?: { file?: boolean }): Promise<Store>;
  /** Where a child process opens the same store: a file path or a URL. */
  target(): Promise<string>;
}

export async function benchEngines(): Promise<{ engines: BenchEngine[]; stop: () => Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'yoke-bench-store-'));
  let files = 0;
  let dbs = 0;
  const sqlite: BenchEngine = {
    name: 'sqlite',
    suffix: '',
    open: async (opts) => openStoreAt(opts?.file ? join(dir, `s${++files}.db`) : ':memory:'),
    target: async () => {
      const path = join(dir, `s${++files}.db`);
      await (await openStoreAt(path)).close();
      return path;
    },
  };
  const bin = findPostgresBin();
  let server: LocalPostgres | null = null;
  if (bin) server = await startPostgres({ bin });
  else console.log('postgres: not installed (apt-get install -y postgresql); the _postgres figures are not measured');
  const pg: BenchEngine | null = server && {
    name: 'postgres',
    suffix: '_postgres',
    open: async () => openStoreAt(await server!.createDatabase(`bench_${++dbs}`)),
    target: async () => {
      const url = await server!.createDatabase(`bench_${++dbs}`);
      await (await openStoreAt(url)).close();
      return url;
    },
  };
  return {
    engines: pg ? [sqlite, pg] : [sqlite],
    stop: async () => {
      await server?.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Runs `processes` launch workers at once on one store; total recorded launches per second of the slowest. */
export async function concurrentLaunches(target: string, processes: number, each: number): Promise<number> {
  const t0 = performance.now();
  const outs = await Promise.all(
    Array.from(
      { length: processes },
      (_, i) =>
        new Promise<{ launched: number }>((resolve, reject) => {
          const child = spawn(
            process.execPath,
            [
              '--import',
              import.meta.resolve('tsx'),
              join(import.meta.dirname, 'launch-worker.ts'),
              target,
              `w${i}`,
              String(each),
            ],
            { stdio: ['ignore', 'pipe', 'inherit'] },
          );
          let out = '';
          child.stdout.on('data', (c: Buffer) => (out += c.toString()));
          child.on('exit', (code) =>
            code === 0
              ? resolve(JSON.parse(out.trim().split('\n').at(-1)!) as { launched: number })
              : reject(new Error(`launch worker exited ${code}`)),
          );
        }),
    ),
  );
  const secs = (performance.now() - t0) / 1000;
  return Math.round(outs.reduce((s, o) => s + o.launched, 0) / secs);
}
