import { Command } from 'commander';
import { formatFleetReport, type FleetReport } from '../http/report.js';
import { call, CliFailure, numberArg, repoArg, type CliIo } from './client.js';
import { registerDeliveryCommands } from './delivery.js';
import { registerConfigCommand } from './config-check.js';
import { registerDbCommands } from './db.js';
import { registerInitCommand } from './init.js';
import { DriverExit, registerWatchCommand, type WatchDeps } from './watch.js';
import { nodeExec, nodeHead, nodeReadFile } from './exec.js';

// The yoke CLI: the operator API from a terminal. It talks HTTPS to a running
// yoke (YOKE_URL) with an operator token (YOKE_TOKEN).

export type { CliIo } from './client.js';

export function buildCli(io: CliIo, watch: WatchDeps = {}): Command {
  const program = new Command('yoke').description('Operate a yoke fleet through its HTTP API.').exitOverride();
  program.option('--url <url>', 'yoke\'s URL (default $YOKE_URL, else http://localhost:3000)').option('--token <token>', 'your yoke token: an operator token, or your own person token (default $YOKE_TOKEN)');
  program.configureOutput({ writeOut: (s) => io.out(s.trimEnd()), writeErr: (s) => io.err(s.trimEnd()) });
  const g = () => program.opts<{ url?: string; token?: string }>();
  const message = (json: unknown) => io.out((json as { message: string }).message);

  program
    .command('fleet')
    .description('the fleet')
    .command('report')
    .description('every repository, its cap, pause and live runs, with what recovers it')
    .option('--json', 'print the report as JSON')
    .action(async (opts: { json?: boolean }) => {
      const report = (await call(io, g(), 'GET', '/yoke/api/fleet')) as FleetReport;
      io.out(opts.json ? JSON.stringify(report, null, 2) : formatFleetReport(report));
    });
  const repo = program.command('repo').description('one repository');
  repo
    .command('reset <owner/repo>')
    .description('clear the failure count and lift a pause')
    .action(async (name: string) => message(await call(io, g(), 'POST', `/yoke/api/repos/${repoArg(name)}/reset`)));
  repo
    .command('status <owner/repo>')
    .description("the repository's state as yoke holds it: enabled, paused or disabled, and why")
    .action(async (name: string) => message(await call(io, g(), 'GET', `/yoke/api/repos/${repoArg(name)}/status`)));
  repo
    .command('auto <owner/repo> <on|off>')
    .description('turn the auto loop on or off')
    .action(async (name: string, state: string) => {
      repoArg(name);
      if (state !== 'on' && state !== 'off') throw new CliFailure('Say "on" or "off", e.g. yoke repo auto acme/api on');
      message(await call(io, g(), 'POST', `/yoke/api/repos/${name}/auto`, { enabled: state === 'on' }));
    });
  repo
    .command('start <owner/repo> <issue>')
    .description('a manual AFK run for an issue')
    .action(async (name: string, issue: string) => message(await call(io, g(), 'POST', `/yoke/api/repos/${repoArg(name)}/issues/${numberArg('issue', issue)}/start`)));
  const runs = program.command('runs').description("yoke's agent runs: AFK, lander and fix");
  const runLine = (r: { id: string; repo: string; kind: string; subject: string; status: string; outcome: string | null; summary: string | null; outcomeReason: string | null }) =>
    `${r.id} · ${r.repo} ${r.kind} ${r.subject} · ${r.status === 'live' ? 'live' : (r.outcome ?? 'ended')}${r.status === 'live' || r.outcome === 'success' ? '' : ` · ${(r.summary ?? r.outcomeReason ?? 'no reason recorded').split('\n')[0]!.slice(0, 160)}`}`;
  runs
    .command('list')
    .description('the newest runs, each with why it failed when it did')
    .option('--repo <owner/repo>', 'only this repository')
    .option('--status <status>', 'live, success, failure, timeout or cancelled')
    .option('--json', 'print them as JSON')
    .action(async (o: { repo?: string; status?: string; json?: boolean }) => {
      const q = new URLSearchParams({ ...(o.repo ? { repo: repoArg(o.repo) } : {}), ...(o.status ? { status: o.status } : {}) });
      const { runs: list } = (await call(io, g(), 'GET', `/yoke/api/runs${q.size ? `?${q}` : ''}`)) as { runs: Parameters<typeof runLine>[0][] };
      if (o.json) return io.out(JSON.stringify(list, null, 2));
      if (list.length === 0) return io.out('No runs match.');
      for (const r of list) io.out(runLine(r));
    });
  runs
    .command('get <run>')
    .description('one run: what it worked on, how it ended and what it reported')
    .action(async (id: string) => io.out(JSON.stringify(await call(io, g(), 'GET', `/yoke/api/runs/${encodeURIComponent(id)}`), null, 2)));
  registerInitCommand(program, io);
  registerConfigCommand(program, io);
  registerDbCommands(program, io);
  registerDeliveryCommands(program, io, g);
  registerWatchCommand(program, io, g, watch);
  return program;
}

/** Runs the CLI; returns the exit code. */
export async function runCli(argv: string[], io: CliIo, watch: WatchDeps = {}): Promise<number> {
  try {
    await buildCli(io, watch).parseAsync(argv, { from: 'user' });
    return 0;
  } catch (err) {
    if (err instanceof DriverExit) return err.exitCode;
    if (err instanceof CliFailure) {
      io.err(err.message);
      return 1;
    }
    const code = (err as { exitCode?: number }).exitCode;
    if (typeof code === 'number') return code; // commander already said what was wrong
    throw err;
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const code = await runCli(process.argv.slice(2), { out: (l) => console.log(l), err: (l) => console.error(l), env: process.env, fetch, exec: nodeExec, head: nodeHead, readFile: nodeReadFile });
  process.exit(code);
}
