import { Command, InvalidArgumentError } from 'commander';

// `npm run sandbox`'s command line.

const dollars = (v: string): number => {
  const n = Number(v);
  if (!/^\d+(\.\d+)?$/.test(v.trim()) || !(n > 0))
    throw new InvalidArgumentError('give US dollars above 0, e.g. --budget 3');
  return n;
};

const count = (v: string): number => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('give a whole number, e.g. --fail-agent 3');
  return n;
};

/** `npm run sandbox`'s flags, declared once: main.ts parses them, and docs/sandbox.md must name each. */
export const sandboxProgram = (): Command =>
  new Command('sandbox')
    .description('Run yoke end to end against an embedded forge seeded with a demo repository.')
    .option('--launcher <kind>', 'actions (workflow runs, as in production) or command (local processes)', 'actions')
    .option(
      '--fail-agent <n>',
      'make the demo agent fail its first N runs (shows three strikes and /yoke reset)',
      count,
      0,
    )
    .option(
      '--runs-reach <how>',
      'api (runs call yoke at its URL) or github (runs hand results back through the forge; yoke gets no inbound connection, not even webhooks)',
      'api',
    )
    .option('--keep-running', 'stay up after the demo for the dashboard and the API', false)
    .option('--timeout <seconds>', 'give up waiting after this long', count, 170)
    .option('--no-deliver', 'stop at the merges (the shorter run): no deployment run, QA or close-out')
    .option(
      '--drop-answers <n>',
      'a proxy between the deploy driver and yoke drops the first N dispatch answers',
      count,
      0,
    )
    .option(
      '--postgres',
      'two yoke processes on a PostgreSQL started here (apt-get install -y postgresql): webhooks go to one, run reports to the other',
      false,
    )
    .option(
      '--otel [url]',
      'export OpenTelemetry traces: to this OTLP/HTTP collector, or (no URL) to a receiver the sandbox runs, whose traces it summarises',
    )
    .option(
      '--budget <usd>',
      "the fleet's daily budget in US dollars (YOKE_DAILY_USD): each run reserves its limit, and what does not fit waits for money, shown in the end table. Any other YOKE_* setting in the environment passes through",
      dollars,
    )
    .option(
      '--agent <name>',
      'run the real agent CLI (claude-code or codex) through its shipped workflow, against a scripted local model',
    );
