import { agentDeliver, landerVerdict } from './deliver.js';
import { agentRun, type RunnerIo } from './run.js';
import { agentValidate } from './validate.js';

// yoke's runner: the one program a workflow job gets from yoke's own URL
// (`GET /yoke/runner.mjs`, hash-checked), so its version is always the
// server's. `yoke agent …` in the CLI runs the same functions.

export const RUNNER_COMMANDS: Record<string, (io: RunnerIo) => Promise<number>> = {
  run: agentRun,
  deliver: agentDeliver,
  verdict: landerVerdict,
  validate: agentValidate,
};

export async function runnerMain(argv: string[], io: RunnerIo): Promise<number> {
  const [group, cmd] = argv;
  const fn = group === 'agent' && cmd ? RUNNER_COMMANDS[cmd] : undefined;
  if (!fn) {
    io.out(`usage: yoke agent ${Object.keys(RUNNER_COMMANDS).join('|')}`);
    return 2;
  }
  return fn(io);
}

const entry = process.argv[1] ?? '';
if (import.meta.url === `file://${entry}` || entry.endsWith('yoke-runner.mjs')) {
  const io: RunnerIo = { env: process.env, cwd: process.cwd(), out: (l) => console.log(l), now: () => Date.now() };
  process.exit(await runnerMain(process.argv.slice(2), io));
}
