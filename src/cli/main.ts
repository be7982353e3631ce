import { Command } from 'commander';
import { formatFleetReport } from '../http/report.js';
import { runResult } from '../http/dashboard-parts.js';
import { ROUTE, RUN_STATUSES } from '../http/routes.js';
import type { PublicRun } from '../fleet/report.js';
import { callRoute, CliFailure, numberArg, repoArg, repoParams, type CliIo } from './client.js';
import { registerDeliveryCommands } from './delivery.js';
import { registerConfigCommand } from './config-check.js';
import { registerDbCommands } from './db.js';
import { registerInitCommand } from './init.js';
import { DriverExit, registerWatchCommand, type WatchDeps } from './watch.js';
import { nodeExec, nodeHead, nodeReadFile } from './exec.js';
import { readFileSync } from 'node:fs';
import { RUNNER_COMMANDS } from '../agent/main.js';
import { nextPassText } from '../fleet/messages.js';
import { doctorText } from '../http/doctor.js';

// The yoke CLI: the operator API from a terminal. It talks HTTPS to a running
// yoke (YOKE_URL) with an operator token (YOKE_TOKEN).

export type { CliIo } from './client.js';

export function buildCli(io: CliIo, watch: WatchDeps = {}): Command {
  const program = new Command('yoke')
    .description('Operate a yoke fleet through its HTTP API.')
    .version(yokeVersion(), '-V, --version', "print yoke's version")
    .exitOverride();
  program
    .option('--url <url>', "yoke's URL (default $YOKE_URL, else http://localhost:3000)")
    .option('--token <token>', 'your yoke token: an operator token, or your own person token (default $YOKE_TOKEN)');
  program.configureOutput({ writeOut: (s) => io.out(s.trimEnd()), writeErr: (s) => io.err(s.trimEnd()) });
  const g = () => program.opts<{ url?: string; token?: string }>();
  const message = (answer: { message: string }) => io.out(answer.message);

  program
    .command('fleet')
    .description('the fleet')
    .command('report')
    .description('every repository, its cap, pause and live runs, with what recovers it')
    .option('--json', 'print the report as JSON')
    .action(async (opts: { json?: boolean }) => {
      const report = await callRoute(io, g(), ROUTE.fleet);
      io.out(opts.json ? JSON.stringify(report, null, 2) : formatFleetReport(report));
    });
  const repo = program.command('repo').description('one repository');
  repo
    .command('reset <owner/repo>')
    .description('clear the failure count and lift a pause')
    .action(async (name: string) => message(await callRoute(io, g(), ROUTE.reset, { params: repoParams(name) })));
  repo
    .command('status <owner/repo>')
    .description("the repository's state as yoke holds it: enabled, paused or disabled, and why")
    .action(async (name: string) => message(await callRoute(io, g(), ROUTE.repoStatus, { params: repoParams(name) })));
  repo
    .command('auto <owner/repo> <on|off>')
    .description('turn the auto loop on or off')
    .action(async (name: string, state: string) => {
      const params = repoParams(name);
      if (state !== 'on' && state !== 'off') throw new CliFailure('Say "on" or "off", e.g. yoke repo auto acme/api on');
      message(await callRoute(io, g(), ROUTE.auto, { params, body: { enabled: state === 'on' } }));
    });
  repo
    .command('start <owner/repo> <issue>')
    .description('a manual AFK run for an issue')
    .action(async (name: string, issue: string) =>
      message(
        await callRoute(io, g(), ROUTE.start, { params: { ...repoParams(name), number: numberArg('issue', issue) } }),
      ),
    );
  program
    .command('plan <owner/repo>')
    .description('what the next pass would do for a repository, in order, and why not for the rest; changes nothing')
    .option('--json', 'print it as JSON')
    .action(async (name: string, opts: { json?: boolean }) => {
      const next = await callRoute(io, g(), ROUTE.nextPass, { params: repoParams(name) });
      io.out(opts.json ? JSON.stringify(next, null, 2) : nextPassText(next));
    });
  program
    .command('doctor <owner/repo>')
    .description(
      "check a repository's set-up from the running yoke: the app's permissions and events, the opt-in file, the workflow, the agent's secret, the public URL and the environments",
    )
    .option('--json', 'print it as JSON')
    .action(async (name: string, opts: { json?: boolean }) => {
      const report = await callRoute(io, g(), ROUTE.doctor, { params: repoParams(name) });
      io.out(opts.json ? JSON.stringify(report, null, 2) : doctorText(report));
      if (!report.ok) throw new CommandExit(1);
    });
  const runs = program.command('runs').description("yoke's agent runs: AFK, lander and fix");
  const runLine = (
    r: Pick<
      PublicRun,
      | 'id'
      | 'repo'
      | 'kind'
      | 'subject'
      | 'status'
      | 'outcome'
      | 'verdict'
      | 'summary'
      | 'outcomeReason'
      | 'why'
      | 'cost'
      | 'issueNumber'
    >,
  ) =>
    `${r.id} · ${r.repo} ${r.kind} ${r.subject}${r.kind === 'fix' && r.why ? ` (for ${r.why})` : ''} · ${runResult(r)}${r.cost ? ` · $${r.cost.usd.toFixed(2)}${r.issueNumber !== null ? ` (for #${r.issueNumber})` : ''}` : ''}${r.status === 'live' || r.outcome === 'success' ? '' : ` · ${(r.summary ?? r.outcomeReason ?? 'no reason recorded').split('\n')[0]!.slice(0, 160)}`}`;
  runs
    .command('list')
    .description('the newest runs, each with why it failed when it did')
    .option('--repo <owner/repo>', 'only this repository')
    .option('--status <status>', 'live, success, failure, timeout or cancelled')
    .option('--json', 'print them as JSON')
    .action(async (o: { repo?: string; status?: string; json?: boolean }) => {
      // Checked here, before any request, and named as the option it is.
      if (o.status !== undefined && !(RUN_STATUSES as readonly string[]).includes(o.status))
        throw new CliFailure(`--status is "${o.status}", which is not one of ${RUN_STATUSES.join(', ')}.`);
      const { runs: list, issues } = await callRoute(io, g(), ROUTE.runs, {
        query: { repo: o.repo === undefined ? undefined : repoArg(o.repo), status: o.status },
      });
      if (o.json) return io.out(JSON.stringify(list, null, 2));
      if (list.length === 0) return io.out('No runs match.');
      for (const r of list) io.out(runLine(r));
      // BU06: what each of their issues has cost so far, over all its runs that reported a cost.
      if (issues.length) io.out('what each issue has cost so far:');
      for (const i of issues)
        io.out(
          `  ${i.repo}#${i.issue}: $${i.usd.toFixed(2)} over ${i.runs} run(s) (AFK $${i.byKind.afk.toFixed(2)}, fixes $${i.byKind.fix.toFixed(2)}, landers $${i.byKind.lander.toFixed(2)}), ${i.inputTokens} input and ${i.outputTokens} output tokens`,
        );
    });
  runs
    .command('get <run>')
    .description('one run: what it worked on, how it ended and what it reported')
    .action(async (id: string) =>
      io.out(JSON.stringify(await callRoute(io, g(), ROUTE.run, { params: { run: id } }), null, 2)),
    );
  registerInitCommand(program, io);
  registerConfigCommand(program, io);
  registerDbCommands(program, io);
  registerDeliveryCommands(program, io, g);
  registerWatchCommand(program, io, g, watch);
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
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

/** An exit code a command chose (the runner's), carried out of commander. */
class CommandExit extends Error {
  constructor(readonly exitCode: number) {
    super(`exit ${exitCode}`);
  }
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
export async function runCli(argv: string[], io: CliIo, watch: WatchDeps = {}): Promise<number> {
  try {
    await buildCli(io, watch).parseAsync(argv, { from: 'user' });
    return 0;
  } catch (err) {
    if (err instanceof DriverExit || err instanceof CommandExit) return err.exitCode;
    if (err instanceof CliFailure) {
      io.err(err.message);
      return 1;
    }
    const code = (err as { exitCode?: number }).exitCode;
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
    exec: (command, env, opts) => nodeExec(command, env, process.cwd(), process.env, opts),
    head: nodeHead,
    readFile: nodeReadFile,
  });
  process.exit(code);
}

if (import.meta.url === `file://${process.argv[1]}`) await main(process.argv.slice(2));
