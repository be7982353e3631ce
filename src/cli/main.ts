import { Command } from 'commander';
import { z } from 'zod';
import { formatFleetReport, type FleetReport } from '../fleet/report.js';

// The yoke CLI: the operator API from a terminal. It talks HTTPS to a running
// yoke (YOKE_URL) with an operator token (YOKE_TOKEN).

const ApiError = z.object({ error: z.object({ code: z.string(), message: z.string(), recovery: z.string() }) });

export interface CliIo {
  out: (line: string) => void;
  err: (line: string) => void;
  env: Record<string, string | undefined>;
  fetch: typeof fetch;
}

class CliFailure extends Error {}

async function call(io: CliIo, opts: { url?: string; token?: string }, method: string, path: string, body?: unknown): Promise<unknown> {
  const url = (opts.url ?? io.env.YOKE_URL ?? 'http://localhost:3000').replace(/\/$/, '');
  const token = opts.token ?? io.env.YOKE_TOKEN;
  if (!token) throw new CliFailure('No operator token. Set YOKE_TOKEN (one of the server\'s YOKE_API_TOKENS) or pass --token.');
  let res: Response;
  try {
    res = await io.fetch(`${url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (err) {
    throw new CliFailure(`yoke at ${url} did not answer (${err instanceof Error ? err.message : err}). Check YOKE_URL or --url.`);
  }
  const json: unknown = await res.json().catch(() => null);
  if (!res.ok) {
    const parsed = ApiError.safeParse(json);
    throw new CliFailure(parsed.success ? `${parsed.data.error.message}\nTo recover: ${parsed.data.error.recovery}` : `yoke answered ${res.status}`);
  }
  return json;
}

export function buildCli(io: CliIo): Command {
  const program = new Command('yoke').description('Operate a yoke fleet through its HTTP API.').exitOverride();
  program.option('--url <url>', 'yoke\'s URL (default $YOKE_URL, else http://localhost:3000)').option('--token <token>', 'an operator token (default $YOKE_TOKEN)');
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
    .action(async (name: string) => message(await call(io, g(), 'POST', `/yoke/api/repos/${name}/reset`)));
  repo
    .command('auto <owner/repo> <on|off>')
    .description('turn the auto loop on or off')
    .action(async (name: string, state: string) => {
      if (state !== 'on' && state !== 'off') throw new CliFailure('Say "on" or "off", e.g. yoke repo auto acme/api on');
      message(await call(io, g(), 'POST', `/yoke/api/repos/${name}/auto`, { enabled: state === 'on' }));
    });
  repo
    .command('start <owner/repo> <issue>')
    .description('a manual AFK run for an issue')
    .action(async (name: string, issue: string) => message(await call(io, g(), 'POST', `/yoke/api/repos/${name}/issues/${Number(issue)}/start`)));
  return program;
}

/** Runs the CLI; returns the exit code. */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  try {
    await buildCli(io).parseAsync(argv, { from: 'user' });
    return 0;
  } catch (err) {
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
  const code = await runCli(process.argv.slice(2), { out: (l) => console.log(l), err: (l) => console.error(l), env: process.env, fetch });
  process.exit(code);
}
