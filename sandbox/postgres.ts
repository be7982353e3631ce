import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { postgresSql } from '../src/store/sql/postgres-sql.js';

// A real PostgreSQL of the machine's own (Debian's `postgresql` package), on a
// free loopback port in a folder of its own, for the tests and the sandbox:
// initdb, then the server as a child process, removed with its folder at stop.

export interface LocalPostgres {
  /** postgres://… for a database of its own (see createDatabase). */
  url(database?: string): string;
  /** A fresh database, empty or a copy of `template` (which nothing may be connected to); returns its URL. */
  createDatabase(name: string, template?: string): Promise<string>;
  /** Ends the server (as a crash would with `kill: true`) and removes its folder. */
  stop(): Promise<void>;
  /** The server process, for tests that must see it die. */
  readonly pid: number;
}

/** Where the PostgreSQL server programs are: on PATH, else Debian's versioned folder (newest first); null when not installed. */
export function findPostgresBin(): string | null {
  const onPath = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' }).stdout.trim();
  if (onPath && existsSync(join(onPath, '..', 'postgres'))) return join(onPath, '..');
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? join(root, versions[0], 'bin') : null;
}

const freePort = (): Promise<number> =>
  new Promise((done, fail) => {
    const s = createServer();
    s.once('error', fail);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => done(port));
    });
  });

/** PostgreSQL refuses to run as root: under root, its programs run as the `postgres` user the package made. */
function runAs(): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  const id = (flag: string) => Number(spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' }).stdout.trim());
  const uid = id('-u');
  const gid = id('-g');
  if (!Number.isInteger(uid) || uid <= 0)
    throw new Error(
      "PostgreSQL cannot run as root, and there is no `postgres` user to run it as: install Debian's `postgresql` package, or run as another user.",
    );
  return { uid, gid };
}

export async function startPostgres(opts: { bin?: string; maxConnections?: number } = {}): Promise<LocalPostgres> {
  const bin = opts.bin ?? findPostgresBin();
  if (!bin) throw new Error('PostgreSQL is not installed: `apt-get install -y postgresql`.');
  const dir = mkdtempSync(join(tmpdir(), 'yoke-pg-'));
  const user = runAs();
  if (user) chownSync(dir, user.uid, user.gid);
  const as = user ? { uid: user.uid, gid: user.gid } : {};
  const data = join(dir, 'data');
  const init = spawnSync(
    join(bin, 'initdb'),
    ['-D', data, '-U', 'yoke', '--auth=trust', '-E', 'UTF8', '--no-locale', '--no-sync'],
    { encoding: 'utf8', ...as },
  );
  if (init.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`initdb failed: ${init.stderr || init.stdout}`);
  }
  const port = await freePort();
  // Durability is not what these databases are for: speed is.
  const server: ChildProcess = spawn(
    join(bin, 'postgres'),
    [
      '-D',
      data,
      '-p',
      String(port),
      '-k',
      dir,
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'fsync=off',
      '-c',
      'synchronous_commit=off',
      '-c',
      'full_page_writes=off',
      '-c',
      `max_connections=${opts.maxConnections ?? 200}`,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'], ...as },
  );
  let log = '';
  server.stderr!.on('data', (c: Buffer) => (log = (log + c.toString()).slice(-4000)));
  const url = (database = 'postgres') => `postgres://yoke@127.0.0.1:${port}/${database}`;
  const until = Date.now() + 30_000;
  for (;;) {
    const probe = postgresSql(url(), { max: 1 });
    try {
      await probe.get({}, 'SELECT 1');
      await probe.close();
      break;
    } catch {
      await probe.close().catch(() => undefined);
      if (server.exitCode !== null || Date.now() > until) {
        server.kill('SIGKILL');
        rmSync(dir, { recursive: true, force: true });
        throw new Error(`PostgreSQL did not start: ${log}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    pid: server.pid!,
    url,
    createDatabase: async (name, template) => {
      for (const n of [name, template ?? 'template1'])
        if (!/^[a-z_][a-z0-9_]*$/.test(n)) throw new Error(`not a database name: ${n}`);
      const admin = postgresSql(url(), { max: 1 });
      try {
        await admin.exec(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ''}`);
      } finally {
        await admin.close();
      }
      return url(name);
    },
    stop: async () => {
      if (server.exitCode === null) {
        const gone = new Promise((r) => server.once('exit', r));
        server.kill('SIGINT'); // fast shutdown: open sessions are ended
        await Promise.race([gone, new Promise((r) => setTimeout(r, 10_000))]);
        if (server.exitCode === null) server.kill('SIGKILL');
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
