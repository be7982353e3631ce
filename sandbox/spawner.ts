import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

// Programs the embedded forge starts for a request (git's http-backend, a log of pushed commits) are started by a
// small process of its own, not by the forge's: a fork copies the process that forks, and the forge shares its
// process with yoke and a test's worker, hundreds of megabytes. From a 200 MB process each request's fork took
// 13 ms of its main thread and 40 ms in all; through the spawner, 0.6 ms and 28 ms. A request's output is
// buffered, as the forge's callers take it whole; a workflow step's streams into its job's log (runStreamed).

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

/** What the spawner sends of a streamed program: its pid, then its output as it comes, then its exit code. */
type Streamed = { pid: number } | { chunk: Uint8Array } | { code: number };

let spawner: ChildProcess | null = null;
let seq = 0;
const waiting = new Map<number, (r: Ran) => void>();
const streaming = new Map<number, (m: Streamed) => void>();
const idle = () => !waiting.size && !streaming.size;

function spawnerProcess(): ChildProcess {
  if (spawner?.connected) return spawner;
  const child = fork(join(import.meta.dirname, 'spawner-child.mjs'), [], {
    execArgv: [],
    serialization: 'advanced',
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  child.on('message', (m: { id: number; code: number | null; stdout: Uint8Array } | ({ id: number } & Streamed)) => {
    const stream = streaming.get(m.id);
    if (stream) {
      if ('code' in m) streaming.delete(m.id);
      stream(m as Streamed);
    } else {
      const done = waiting.get(m.id);
      waiting.delete(m.id);
      if ('stdout' in m) done?.({ code: m.code, stdout: Buffer.from(m.stdout) });
    }
    if (idle()) child.channel?.unref();
  });
  // What it was asked and never answered, when it ends, ends as a program that could not start.
  child.once('exit', () => {
    if (spawner === child) spawner = null;
    for (const [id, done] of waiting) (waiting.delete(id), done({ code: null, stdout: Buffer.alloc(0) }));
    for (const [id, stream] of streaming) (streaming.delete(id), stream({ code: 127 }));
  });
  child.unref();
  child.channel?.unref();
  spawner = child;
  return child;
}

/** Runs a program to its end through the spawner: its exit code and all it wrote to stdout. */
export function runBuffered(asked: Asked): Promise<Ran> {
  const child = spawnerProcess();
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

/**
 * A workflow step through the spawner (sandbox/forge/step-process.ts): bash in a process group of its own, whose pid
 * `started` gets, its output to `out` as it comes; resolved with its exit code once all of it was passed on.
 */
export function runStreamed(
  step: { script: string; cwd: string; env: NodeJS.ProcessEnv },
  out: (chunk: Buffer) => void,
  started: (pid: number) => void,
): Promise<number> {
  const child = spawnerProcess();
  const id = ++seq;
  return new Promise<number>((resolve) => {
    streaming.set(id, (m) => {
      if ('pid' in m) started(m.pid);
      else if ('chunk' in m) out(Buffer.from(m.chunk));
      else resolve(m.code);
    });
    child.channel?.ref();
    child.send({ step: { id, ...step } }, (err) => {
      if (!err || !streaming.delete(id)) return;
      resolve(127);
    });
  });
}
