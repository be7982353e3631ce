import { createServer } from 'node:net';
import { spawn, type ChildProcess } from 'node:child_process';
import { builtServer } from './bundles.js';

// A yoke of its own process, as `npm start` runs it (the sandbox's second yoke
// with --postgres; src/main.ts bundled: bundles.ts): started with the
// environment given, ready once its health route answers at `url`.

export async function startYokeProcess(env: Record<string, string>, url: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, [await builtServer()], {
    env: { ...process.env, ...env, LOG_FORMAT: 'json' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr!.on('data', (c: Buffer) => (err = (err + c.toString()).slice(-4000)));
  child.stdout!.resume();
  for (const until = Date.now() + 30_000; ;) {
    if (child.exitCode !== null) throw new Error(`the second yoke process exited ${child.exitCode}: ${err}`);
    if (
      await fetch(`${url}/yoke/api/health`).then(
        (r) => r.ok,
        () => false,
      )
    )
      return child;
    if (Date.now() > until) {
      child.kill('SIGKILL');
      throw new Error(`the second yoke process did not answer within 30 s: ${err}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A clean stop (SIGTERM, so it hands its lead over), then SIGKILL after 5 s. */
export async function stopYokeProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await Promise.race([gone, new Promise((r) => setTimeout(r, 5000))]);
  child.kill('SIGKILL');
}

/** A free port on loopback, for a yoke process the sandbox starts. */
export async function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => res(port));
    });
  });
}
