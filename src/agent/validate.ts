import { spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { containAgent, containmentProblem } from './contain/contain.js';
import { readLimits } from './facts.js';
import type { RunnerIo } from './run.js';

// `yoke agent validate`: the lander's validate job. The PR's code runs here,
// under the default branch's .github/yoke/validate.sh, contained as the
// agent's tools are (TR35): a pid namespace of its own, so that nothing it
// starts outlives the step and no runner process, token or file is in reach;
// no_new_privs, so sudo gives it nothing; only the system's folders, its
// checkout (writable) and the default branch's checkout (read-only) in view,
// no host socket; and no network but the hosts the opt-in file allows its
// tests (`validate.network.allow`), through the runner's proxy. Its exit code
// is the verdict: 0 accepts the head, anything else rejects it.

export const VALIDATE_SCRIPT = '.github/yoke/validate.sh';

/** The variables validate.sh gets of the runner's: enough to find its tools, nothing that holds a token. */
const PASSED = ['PATH', 'LANG', 'LC_ALL', 'TZ', 'TERM', 'CI', 'GITHUB_REPOSITORY', 'GITHUB_SHA'] as const;

export async function agentValidate(io: RunnerIo): Promise<number> {
  const trusted = resolve(io.cwd, io.env.YOKE_TRUSTED_DIR ?? '../trusted');
  const script = join(trusted, VALIDATE_SCRIPT);
  if (!existsSync(script)) {
    io.out(`The default branch has no ${VALIDATE_SCRIPT}: add one that exits 0 when a PR's head is good.`);
    return 1;
  }
  const problem = containmentProblem(io.env.YOKE_BWRAP || 'bwrap');
  if (problem) {
    io.out(`yoke runs the PR's code contained, and cannot here: ${problem}`);
    return 1;
  }
  const limits = readLimits(io.env.YOKE_LIMITS);
  if (!limits.ok) {
    io.out(limits.error);
    return 1;
  }
  const home = mkdtempSync(join(tmpdir(), 'yoke-validate-home-'));
  const contained = await containAgent(
    {
      workspace: io.cwd,
      home,
      env: io.env,
      model: null,
      allow: limits.limits.networkAllow,
      readOnly: [trusted],
      ...(io.env.YOKE_BWRAP ? { bwrap: io.env.YOKE_BWRAP } : {}),
    },
    'bash',
    [script],
  );
  const env: Record<string, string> = { CI: 'true' };
  for (const name of PASSED) if (io.env[name]) env[name] = io.env[name]!;
  Object.assign(env, { HOME: home, TMPDIR: '/tmp' }, contained.env);
  const log = io.env.RUNNER_TEMP ? createWriteStream(join(io.env.RUNNER_TEMP, 'validate.log')) : null;
  try {
    const code = await new Promise<number>((done) => {
      const child = spawn(contained.command, contained.args, { cwd: io.cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
      const keep = (chunk: Buffer) => {
        process.stdout.write(chunk);
        log?.write(chunk);
      };
      child.stdout.on('data', keep);
      child.stderr.on('data', keep);
      const stop = () => child.kill('SIGTERM');
      process.once('SIGTERM', stop);
      process.once('SIGINT', stop);
      child.on('error', (err) => (io.out(`validate.sh did not start: ${err.message}`), done(1)));
      child.on('close', (c, sig) => {
        process.off('SIGTERM', stop);
        process.off('SIGINT', stop);
        done(c ?? (sig ? 1 : 1));
      });
    });
    for (const b of contained.blocked()) io.out(`network: refused ${b.host} (${b.command})`);
    return code;
  } finally {
    await new Promise<void>((r) => (log ? log.end(r) : r()));
    await contained.close();
    rmSync(home, { recursive: true, force: true });
  }
}
