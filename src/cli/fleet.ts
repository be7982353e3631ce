import type { Command } from 'commander';
import type { PublicRun } from '../fleet/notices/report.js';
import { nextPassText } from '../fleet/notices/messages.js';
import { duration, reasonOf, runResult, time } from '../http/pages/dashboard-parts.js';
import { doctorText } from '../http/operator/doctor.js';
import { formatFleetReport } from '../http/operator/report.js';
import { ROUTE, RUN_STATUSES } from '../http/api/routes.js';
import {
  callRoute,
  CliFailure,
  CommandExit,
  numberArg,
  repoArg,
  repoParams,
  type CliIo,
  type GlobalOptions,
} from './client.js';
import { isOneOf } from '../kernel/guards.js';
import { makeRefusal } from '../kernel/codes/table.js';

// The fleet from a terminal: its report, one repository's controls, the dry
// run of the next pass, the set-up check, and the runs.

/** `yoke fleet report`, `yoke repo …`, `yoke plan`, `yoke doctor`. */
export function registerFleetCommands(program: Command, io: CliIo, g: () => GlobalOptions): void {
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
      "check a repository's set-up from the running yoke: the app's permissions and events, the opt-in file, the default branch's rules for the way it lands, the workflow, the agent's secret, the public URL and the environments",
    )
    .option('--json', 'print it as JSON')
    .action(async (name: string, opts: { json?: boolean }) => {
      const report = await callRoute(io, g(), ROUTE.doctor, { params: repoParams(name) });
      io.out(opts.json ? JSON.stringify(report, null, 2) : doctorText(report));
      if (!report.ok) throw new CommandExit(1);
    });
}

/** A run on one line: what it worked on, how it ended, what it cost, and why it failed when it did. */
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

/** `yoke runs list`, `yoke runs get`, `yoke runs settle`. */
export function registerRunsCommands(program: Command, io: CliIo, g: () => GlobalOptions): void {
  const message = (answer: { message: string }) => io.out(answer.message);
  const runs = program.command('runs').description("yoke's agent runs: AFK, lander and fix");
  runs
    .command('list')
    .description('the newest runs, each with why it failed when it did')
    .option('--repo <owner/repo>', 'only this repository')
    .option('--status <status>', 'live, success, failure, timeout or cancelled')
    .option('--json', 'print them as JSON')
    .action(async (o: { repo?: string; status?: string; json?: boolean }) => {
      // Checked here, before any request, and named as the option it is.
      if (o.status !== undefined && !isOneOf(RUN_STATUSES, o.status))
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
    .command('settle <run>')
    .description(
      'set what a run that ended without reporting its spend cost, so the budgets hold that, not its reservation',
    )
    .requiredOption('--usd <dollars>', "what it spent, in dollars, as the model provider's usage shows it")
    .action(async (id: string, o: { usd: string }) => {
      // Checked here, before any request: a typo never settles a run at some other figure.
      const usd = /^\d+(\.\d+)?$/.test(o.usd.trim()) ? Number(o.usd) : NaN;
      if (!Number.isFinite(usd)) {
        const r = makeRefusal('settle_usd_invalid', { given: o.usd });
        throw new CliFailure(`${r.message} ${r.recovery}`);
      }
      message(await callRoute(io, g(), ROUTE.settle, { params: { run: id }, body: { usd } }));
    });
  runs
    .command('get <run>')
    .description('one run: what it worked on, how it ended and what it reported')
    .option('--json', 'print the whole record as JSON')
    .action(async (id: string, o: { json?: boolean }) => {
      const run = await callRoute(io, g(), ROUTE.run, { params: { run: id } });
      io.out(o.json ? JSON.stringify(run, null, 2) : runText(run));
    });
}

/** `yoke runs get`: one run as a person reads it, times in UTC; what it reported, whole, at the end. */
export function runText(r: PublicRun): string {
  const field = (label: string, value: string) => `${label.padEnd(9)} ${value}`;
  const ended = r.endedAt ? `, ended ${time(r.endedAt)} (took ${duration(r.endedAt - r.launchedAt)})` : ', still live';
  const lines = [
    `${r.id} · ${r.repo} ${r.kind} ${r.subject}${r.title !== null ? ` "${r.title}"` : ''} · ${runResult(r)}`,
    field('launched', `${time(r.launchedAt)}${ended}; deadline ${time(r.budgetDeadline)}`),
  ];
  if (r.why) lines.push(field('why', r.why));
  if (r.headSha)
    lines.push(
      field(
        'head',
        `${r.headSha.slice(0, 12)}${r.baseSha ? ` on ${r.baseSha.slice(0, 12)}` : ''}${r.stack.map((m) => ` + #${m.pr}`).join('')}`,
      ),
    );
  if (r.cost)
    lines.push(
      field(
        'cost',
        r.settled
          ? `$${r.cost.usd.toFixed(2)}, settled by ${r.settled.by} at ${time(r.settled.at)} (it reported none)`
          : `$${r.cost.usd.toFixed(2)} (${r.cost.inputTokens} input, ${r.cost.outputTokens} output tokens)`,
      ),
    );
  else if (r.status === 'ended' && (r.reservedUsd ?? 0) > 0)
    lines.push(
      field(
        'cost',
        `unsettled: it reported none, so the budgets hold its reservation of $${r.reservedUsd!.toFixed(2)} (\`yoke runs settle ${r.id} --usd N\`)`,
      ),
    );
  const reason = reasonOf(r, Infinity);
  if (reason && !(r.summary ?? '').startsWith(reason)) lines.push(field('reason', reason));
  lines.push(field('launcher', `${r.launcher}${r.launcherRef ? ` ${r.launcherRef}` : ''}`));
  if (r.summary?.trim())
    lines.push(
      '',
      'what it reported:',
      ...r.summary
        .trim()
        .split('\n')
        .map((l) => `  ${l}`),
    );
  return lines.join('\n');
}
