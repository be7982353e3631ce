import { spawn, type ChildProcess } from 'node:child_process';

/** How long a step that exited may still write to its log, through pipes a process it left behind may hold. */
const STEP_PIPES_MS = 2_000;

/**
 * One `run` step, as a runner runs it: bash in a process group of its own, its output into the job's log; its exit
 * code (143 when a signal ended it, 127 when bash could not start). The step is over once its pipes close, so that
 * all it wrote is in the log before the job ends the log (a write after that would throw); a process it left
 * behind may hold them open, and then it is over a moment after it exited, and what it writes after is dropped.
 */
export function runStep(
  script: string,
  where: { cwd: string; env: NodeJS.ProcessEnv },
  log: NodeJS.WritableStream,
  started: (child: ChildProcess) => void,
): Promise<number> {
  return new Promise<number>((resolve) => {
    const child = spawn('bash', ['-e', '-c', script], { ...where, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    started(child);
    child.stdout.pipe(log, { end: false });
    child.stderr.pipe(log, { end: false });
    child.once('error', () => resolve(127));
    child.once('exit', (c, signal) => {
      const code = signal ? 143 : (c ?? 1);
      const left = setTimeout(() => {
        for (const s of [child.stdout, child.stderr]) s.unpipe(log).destroy();
        resolve(code);
      }, STEP_PIPES_MS);
      child.once('close', () => {
        clearTimeout(left);
        resolve(code);
      });
    });
  });
}
