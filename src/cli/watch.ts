import type { Command } from 'commander';
import { makeRefusal, type Refusal } from '../kernel/codes/table.js';
import { CliFailure, newRunOptions, type CliIo, type GlobalOptions } from './client.js';
import { httpsTransport } from './driver-transport.js';
import { DEFAULT_DRIVER_POLICY, Driver, DriverStop, EXIT, type DriverEvent } from './watch-deploy.js';
import { errorText } from '../kernel/error-text.js';
import { textField } from '../kernel/guards.js';

// `yoke watch deploy`: start a deployment run (or resume one) and drive it to
// its end. Progress lines a person can follow, or one JSON event per line.

export class DriverExit extends Error {
  constructor(readonly exitCode: number) {
    super(`driver stopped (${exitCode})`);
  }
}

function describe(e: DriverEvent): string {
  switch (e.event) {
    case 'run':
      return `deployment run ${e.run} of ${e.repo} at ${String(e.commit).slice(0, 12)}${e.resumed ? ' (resumed)' : ''}`;
    case 'checkin':
      return `checked in as driver of ${e.run}${e.tookOver ? ' (took over a lapsed lease)' : ''}`;
    case 'stage':
      return `stage ${e.stage} (${e.kind})`;
    case 'deploy':
      return `  deploying: ${e.command}`;
    case 'deployed':
      return `  ${e.stage}: ${e.outcome}`;
    case 'gate': {
      const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
      const waits = list(e.waits).map((w) => `    waits: ${textField(w, 'detail')}\n      ${textField(w, 'command')}`);
      const notices = list(e.notices).map((n) => `    told ${textField(n, 'to')} about ${textField(n, 'subject')}`);
      const closed = list(e.closed).map((c) => `    closed out ${String(c)}`);
      return [`  gate check ${e.request}: ${e.state}`, ...notices, ...closed, ...waits].join('\n');
    }
    case 'capture':
      return `    captured ${e.plan}/${e.case}: ${e.result}`;
    case 'retry':
      return `  ${e.code} on ${e.what}: retry ${e.attempt} in ${Math.round(Number(e.delayMs) / 1000)} s`;
    case 'recover':
      return `  the answer was lost: waiting on ${e.request} (${e.wait})`;
    case 'done':
      return `deployment run ${e.run}: ${e.status}`;
    default:
      return JSON.stringify(e);
  }
}

/** `yoke watch deploy`'s options, as commander hands them over. */
interface WatchOptions {
  commit?: string;
  items?: string;
  supersedes?: string;
  fresh?: boolean;
  driver?: string;
  json?: boolean;
  db?: string;
  pollSeconds?: string;
}

/** The driver for one `yoke watch deploy`: through yoke's API, or through the database door it opens. */
async function driverFor(io: CliIo, g: () => GlobalOptions, o: WatchOptions, emit: (e: DriverEvent) => void) {
  const poll = o.pollSeconds === undefined ? null : Number(o.pollSeconds);
  if (poll !== null && !(Number.isFinite(poll) && poll > 0 && poll <= 3600))
    throw new CliFailure('--poll-seconds is a number of seconds, e.g. --poll-seconds 5');
  const policy = {
    ...(io.driverPolicy ?? DEFAULT_DRIVER_POLICY),
    ...(poll !== null ? { gatePollMs: poll * 1000 } : {}),
  };
  // Bad input to the door (no credentials, no database) is a message that names the fix, never a stack trace. The
  // door is yoke itself (Probot, the app, its store), loaded only for it: the CLI starts without them.
  const door = o.db
    ? await (io.openDoor ?? (await import('../door.js')).openDatabaseDoor)(io.env, o.db).catch((err: unknown) => {
        throw new CliFailure(`The database door did not open: ${errorText(err)}`);
      })
    : null;
  const timeoutMs = (policy.resultWaitSeconds + 30) * 1000;
  const driver = new Driver({
    transport: door
      ? httpsTransport(io, { url: door.url, token: door.token }, timeoutMs, 'db')
      : httpsTransport(io, g(), timeoutMs),
    policy,
    sleep: io.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms))),
    exec: io.exec
      ? (command, env) => io.exec!(command, env, { hide: door?.hidden ?? [] })
      : () => Promise.resolve({ code: null, output: '', error: 'this yoke cannot run commands' }),
    emit,
    driverId: o.driver ?? io.env.YOKE_LOGIN ?? `driver-${process.pid}`,
  });
  return { driver, door };
}

/** A new run of owner/repo, or (DX15) the run named, resumed: never recovered by starting afresh. */
async function runToDrive(
  io: CliIo,
  driver: Driver,
  target: string,
  o: WatchOptions,
): Promise<{ run: string; repo: string; commit: string; resumed: boolean } | Refusal> {
  if (target.includes('/')) {
    const view = await driver.create({ repo: target, ...newRunOptions(o, io.env.YOKE_LOGIN) });
    return { run: view.id, repo: view.repo, commit: view.commit, resumed: false };
  }
  if (o.fresh) return makeRefusal('fresh_refused', { run: target });
  const view = await driver.get(target);
  // A run that has ended is not resumed: said before anything says it was.
  if (view.status !== 'active' && view.status !== 'closing')
    return makeRefusal('deployment_run_not_active', { run: view.id, status: view.status });
  return { run: view.id, repo: view.repo, commit: view.commit, resumed: true };
}

async function watchDeploy(io: CliIo, g: () => GlobalOptions, target: string | undefined, o: WatchOptions) {
  if (!target) throw new CliFailure('Name owner/repo to start a run, or `-- RUN-ID` to resume one.');
  const emit = (e: DriverEvent) => io.out(o.json ? JSON.stringify(e) : describe(e));
  const { driver, door } = await driverFor(io, g, o, emit);
  const stop = (r: Refusal, code: number): never => {
    if (o.json)
      io.out(JSON.stringify({ event: 'stop', code: r.code, exit: code, message: r.message, recovery: r.recovery }));
    io.err(`${r.message}\nTo recover: ${r.recovery}`);
    throw new DriverExit(code);
  };
  try {
    const run = await runToDrive(io, driver, target, o);
    // An ended run is yoke's refusal (as the driver's would be); --fresh on a run id is a usage error.
    if ('code' in run) return stop(run, run.code === 'deployment_run_not_active' ? EXIT.refused : EXIT.usage);
    emit({ event: 'run', ...run });
    await driver.drive(run.run);
  } catch (err) {
    if (err instanceof DriverStop) return stop(err.refusal, err.exitCode);
    throw err;
  } finally {
    await door?.close();
  }
}

export function registerWatchCommand(program: Command, io: CliIo, g: () => GlobalOptions): void {
  program
    .command('watch')
    .description('drive deliveries')
    .command('deploy [target]')
    .description(
      'start a deployment run of owner/repo and drive it to its end; `yoke watch deploy -- RUN-ID` resumes one',
    )
    .option('--commit <sha>', 'the commit to pin (a new run)')
    .option('--items <items>', 'only these items (a new run), e.g. APP-12,APP-14')
    .option('--supersedes <run>', 'take over this failed run, on a later commit')
    .option('--fresh', 'start a new run even if the repository has an active one (never to recover a run)')
    .option('--driver <id>', "this driver's id (default $YOKE_LOGIN, else driver-<this process's id>)")
    .option('--json', 'one JSON event per line')
    .option('--poll-seconds <n>', 'between gate checks of a QA stage that still waits (default 15)')
    .option(
      '--db <path-or-url>',
      "the database door: run the dispatch in this process against yoke's store, its SQLite file or postgres:// URL (when yoke deploys itself)",
    )
    .action((target: string | undefined, o: WatchOptions) => watchDeploy(io, g, target, o));
}
