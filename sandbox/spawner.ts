import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

// Programs the embedded forge starts for a request (git's http-backend, a log of pushed commits) are started by a
// small process of its own, not by the forge's: a fork copies the process that forks, and the forge shares its
// process with yoke and a test's worker, hundreds of megabytes. From a 200 MB process each request's fork took
// 13 ms of its main thread and 40 ms in all; through the spawner, 0.6 ms and 28 ms. Output is buffered, as the
// forge's callers take it whole.

export interface Ran {
  /** The exit code; null when the program could not start or a signal ended it. */
  code: number | null;
  stdout: Buffer;
}

interface Asked {
  file: string;
  args: readonly string[];
  env: NodeJS.ProcessEnv;
  cwd?: string;
  input?: Buffer;
}

let spawner: ChildProcess | null = null;
let seq = 0;
const waiting = new Map<number, (r: Ran) => void>();

function started(): ChildProcess {
  if (spawner?.connected) return spawner;
  const child = fork(join(import.meta.dirname, 'spawner-child.mjs'), [], {
    execArgv: [],
    serialization: 'advanced',
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  child.on('message', (m: { id: number; code: number | null; stdout: Uint8Array }) => {
    const done = waiting.get(m.id);
    waiting.delete(m.id);
    if (!waiting.size) child.channel?.unref();
    done?.({ code: m.code, stdout: Buffer.from(m.stdout) });
  });
  // What it was asked and never answered, when it ends, ends as a program that could not start.
  child.once('exit', () => {
    if (spawner === child) spawner = null;
    for (const [id, done] of waiting) (waiting.delete(id), done({ code: null, stdout: Buffer.alloc(0) }));
  });
  child.unref();
  child.channel?.unref();
  spawner = child;
  return child;
}

/** Runs a program to its end through the spawner: its exit code and all it wrote to stdout. */
export function runBuffered(asked: Asked): Promise<Ran> {
  const child = started();
  const id = ++seq;
  return new Promise<Ran>((resolve) => {
    waiting.set(id, resolve);
    child.channel?.ref();
    child.send({ id, ...asked }, (err) => {
      if (!err || !waiting.delete(id)) return;
      resolve({ code: null, stdout: Buffer.alloc(0) });
    });
  });
}
