import { Command } from 'commander';
import { CliFailure, CommandExit, type CliIo } from './client.js';
import { registerFleetCommands, registerRunsCommands } from './fleet.js';
import { registerDeliveryCommands } from './delivery.js';
import { registerConfigCommand } from './config-check.js';
import { registerDbCommands } from './db.js';
import { registerInitCommand } from './init.js';
import { DriverExit, registerWatchCommand } from './watch.js';
import { nodeExec, nodeHead, nodeReadFile } from './exec.js';
import { readFileSync } from 'node:fs';
import { RUNNER_COMMANDS } from '../agent/main.js';
import { fieldOf } from '../kernel/guards.js';

// The yoke CLI: the operator API from a terminal. It talks HTTPS to a running
// yoke (YOKE_URL) with an operator token (YOKE_TOKEN).

export type { CliIo } from './client.js';

export function buildCli(io: CliIo): Command {
  const program = new Command('yoke')
    .description('Operate a yoke fleet through its HTTP API.')
    .version(yokeVersion(), '-V, --version', "print yoke's version")
    .exitOverride();
  program
    .option('--url <url>', "yoke's URL (default $YOKE_URL, else http://localhost:3000)")
    .option('--token <token>', 'your yoke token: an operator token, or your own person token (default $YOKE_TOKEN)');
  program.configureOutput({ writeOut: (s) => io.out(s.trimEnd()), writeErr: (s) => io.err(s.trimEnd()) });
  const g = () => program.opts<{ url?: string; token?: string }>();

  registerFleetCommands(program, io, g);
  registerRunsCommands(program, io, g);
  registerInitCommand(program, io);
  registerConfigCommand(program, io);
  registerDbCommands(program, io);
  registerDeliveryCommands(program, io, g);
  registerWatchCommand(program, io, g);
  registerAgentCommand(program, io);
  program
    .command('serve')
    .description('run yoke itself (the GitHub App, its API and dashboard), set up from the environment and ./.env')
    .action(async () => {
      // Loaded only here: the other commands never start Probot.
      const { serveYoke } = await import('../main.js');
      const code = await serveYoke(io.env, { err: io.err, signals: process });
      if (code !== 0) throw new CommandExit(code);
    });
  return program;
}

/** The package's version, from its package.json (two folders up from src/cli or dist/cli). */
export function yokeVersion(): string {
  return String(fieldOf(JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')), 'version'));
}

/** `yoke agent run|deliver|verdict`: the runner's commands, the same functions a workflow job runs from yoke's URL. */
function registerAgentCommand(program: Command, io: CliIo): void {
  program
    .command('agent <command>')
    .description(`the runner a workflow job runs: ${Object.keys(RUNNER_COMMANDS).join(', ')}`)
    .action(async (name: string) => {
      const fn = RUNNER_COMMANDS[name];
      if (!fn)
        throw new CliFailure(
          `yoke agent ${name}: no such command; say one of ${Object.keys(RUNNER_COMMANDS).join(', ')}.`,
        );
      const code = await fn({ env: io.env, cwd: process.cwd(), out: io.out, now: () => Date.now() });
      if (code !== 0) throw new CommandExit(code);
    });
}

/** Runs the CLI; returns the exit code. */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  try {
    await buildCli(io).parseAsync(argv, { from: 'user' });
    return 0;
  } catch (err) {
    if (err instanceof DriverExit || err instanceof CommandExit) return err.exitCode;
    if (err instanceof CliFailure) {
      io.err(err.message);
      return 1;
    }
    const code = fieldOf(err, 'exitCode');
    if (typeof code === 'number') return code; // commander already said what was wrong
    throw err;
  }
}

/** The CLI as a process runs it: the real terminal, environment, network and shell. */
export async function main(argv: string[]): Promise<never> {
  const code = await runCli(argv, {
    out: (l) => console.log(l),
    err: (l) => console.error(l),
    env: process.env,
    fetch,
    exec: (command, env, opts) => nodeExec(command, env, { opts }),
    head: nodeHead,
    readFile: nodeReadFile,
  });
  process.exit(code);
}

if (import.meta.url === `file://${process.argv[1]}`) await main(process.argv.slice(2));
