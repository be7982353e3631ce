import { runStreamed } from '../spawner.js';

/** A step's process, as its job holds it: the process group a cancel ends. */
export interface StepProcess {
  pid: number;
}

/**
 * One `run` step, as a runner runs it: bash in a process group of its own, its output into the job's log; its exit
 * code (143 when a signal ended it, 127 when bash could not start). The step is over once its pipes close, so that
 * all it wrote is in the log before the job ends the log (a write after that would throw); a process it left
 * behind may hold them open, and then it is over a moment after it exited, and what it writes after is dropped.
 * The forge's spawner starts it (sandbox/spawner.ts): forking the forge's own process, which holds yoke and a
 * test's worker too, blocked the forge for about 11 ms a step.
 */
export function runStep(
  script: string,
  where: { cwd: string; env: NodeJS.ProcessEnv },
  log: NodeJS.WritableStream,
  started: (child: StepProcess) => void,
): Promise<number> {
  return runStreamed(
    { script, ...where },
    (chunk) => log.write(chunk),
    (pid) => started({ pid }),
  );
}
