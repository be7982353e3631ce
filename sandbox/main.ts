import { startOtlpReceiver } from './otlp-receiver.js';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { agentCliBin } from './agent-clis.js';
import { attachDemoPlans, deliverDemo } from './deliver.js';
import { REVIEWER } from './demo-repo.js';
import { DEMO_ATTACHMENTS, DEMO_REPO } from './demo-repo.js';
import { Sandbox } from './sandbox.js';
import { formatSummary, SUMMARY_LEGEND } from './summary.js';
import { sandboxProgram } from './program.js';
import { sandboxSettings } from './env.js';
import type { FleetReport } from '../src/http/operator/report.js';

// `npm run sandbox`: the whole life of five demo issues on this machine, with
// no GitHub account. It ends by itself when every issue is merged or stuck.

/** Which real agent CLI runs, its version and where it is, said before the demo starts. */
function agentLine(agent: 'claude-code' | 'codex'): string {
  const name = agent === 'claude-code' ? 'claude' : 'codex';
  const bin = agentCliBin(name);
  const version = bin ? spawnSync(join(bin, name), ['--version'], { encoding: 'utf8' }).stdout.trim() : '';
  return `agent:  the real ${agent} CLI${version ? ` (${version})` : ''}, ${bin ? join(bin, name) : 'not installed: bash bin/install-agents'}, through its shipped workflow, against a scripted model on loopback`;
}

const program = sandboxProgram().parse();

const opts = program.opts<{
  launcher: string;
  runsReach: string;
  failAgent: number;
  keepRunning: boolean;
  timeout: number;
  deliver: boolean;
  dropAnswers: number;
  agent?: string;
  postgres: boolean;
  otel?: string | boolean;
  budget?: number;
}>();
// Every YOKE_* setting the sandbox does not wire itself passes through; one it wires is refused, saying why.
const settings = sandboxSettings(process.env);
if (!settings.ok) {
  for (const p of settings.problems) console.error(p);
  process.exit(2);
}
if (opts.agent !== undefined && opts.agent !== 'claude-code' && opts.agent !== 'codex') {
  console.error(`--agent must be "claude-code" or "codex", not "${opts.agent}"`);
  process.exit(2);
}
if (opts.agent && opts.launcher !== 'actions') {
  console.error('--agent runs through the shipped workflow: use it with --launcher actions (the default)');
  process.exit(2);
}
if (opts.runsReach !== 'api' && opts.runsReach !== 'github') {
  console.error(`--runs-reach must be "api" or "github", not "${opts.runsReach}"`);
  process.exit(2);
}
if (opts.runsReach === 'github' && opts.launcher !== 'actions') {
  console.error('--runs-reach github is how Actions runs reach yoke: use it with --launcher actions (the default)');
  process.exit(2);
}
if (opts.launcher !== 'actions' && opts.launcher !== 'command') {
  console.error(`--launcher must be "actions" or "command", not "${opts.launcher}"`);
  process.exit(2);
}

// --otel with no URL: the traces go to a receiver in this process, summarised at the end.
const receiver = opts.otel === true ? await startOtlpReceiver() : null;
const otelUrl = receiver?.url ?? (typeof opts.otel === 'string' ? opts.otel : null);
const sandbox = new Sandbox({
  env: {
    ...settings.env,
    ...(opts.budget !== undefined ? { YOKE_DAILY_USD: String(opts.budget) } : {}),
    ...(otelUrl ? { OTEL_EXPORTER_OTLP_ENDPOINT: otelUrl } : {}),
  },
  launcher: opts.launcher,
  failAgent: opts.failAgent,
  log: 'console',
  postgres: opts.postgres,
  runsReach: opts.runsReach as 'api' | 'github',
  ...(opts.agent ? { agent: opts.agent as 'claude-code' | 'codex' } : {}),
});
const started = Date.now();
const stopAll = async (code: number) => {
  // A stop that hangs (a run mid-exit, say) must not keep the data folder: it is removed whatever happens.
  await Promise.race([sandbox.stop().catch(() => undefined), new Promise((r) => setTimeout(r, 3000))]);
  sandbox.removeData();
  process.exit(code);
};
process.on('SIGINT', () => void stopAll(130));
process.on('SIGTERM', () => void stopAll(143));
process.on('exit', () => sandbox.removeData());

// Probot's runner, started by the sandbox, exits on SIGINT as soon as its own
// server stops; the sandbox has its runs and its forge to stop first, then its
// folder to remove. Only that listener goes. (npm runs this with `node
// --import tsx`, not the tsx command: its parent process SIGKILLs a child that
// does not acknowledge a signal within 30 ms, which a loaded machine misses.)
const before = new Set(process.listeners('SIGINT'));
try {
  await sandbox.start();
} catch (err) {
  console.error(err instanceof Error ? err.message : String(err));
  await stopAll(1);
}
for (const l of process.listeners('SIGINT')) if (!before.has(l)) process.removeListener('SIGINT', l);
if (opts.deliver) await attachDemoPlans(sandbox);
console.log(`forge:  ${sandbox.forge.url} (GitHub API at ${sandbox.forge.url}/api/v3, repository ${DEMO_REPO})`);
console.log(
  `yoke:   ${sandbox.yokeUrl} (dashboard ${sandbox.dashboardUrl}; sign in with the operator token ${sandbox.apiToken})`,
);
// The CLI can reach yoke only while it is up: after the demo, that is only with --keep-running.
console.log(
  opts.keepRunning
    ? `The CLI, from another terminal:\n  export YOKE_URL=${sandbox.yokeUrl} YOKE_TOKEN=${sandbox.apiToken}\n  npm run yoke -- fleet report`
    : 'It stops when the demo ends; add --keep-running to keep yoke up for the dashboard and the CLI afterwards.',
);
if (opts.agent) console.log(agentLine(opts.agent as 'claude-code' | 'codex'));
if (opts.postgres)
  console.log(
    `store:  PostgreSQL ${sandbox.databaseUrl}; two yoke processes: webhooks go to ${sandbox.yokeUrl}, run reports to ${sandbox.reportUrl}`,
  );
if (opts.runsReach === 'github')
  console.log(
    "runs:   reach yoke through the forge alone: they are told no URL of yoke's and the forge sends it no webhook; yoke polls, reads each run's yoke-result artifact, and answers production's protection rule by polling its waiting runs",
  );
console.log(`launcher: ${opts.launcher}; cap 2; five issues labelled yoke:afk\n`);

let told = false;
/**
 * With --keep-running: how to reach what stays up. Said when a wait is first held open for a person, and
 * again when the demo settles, last, where a person looks once the output stops.
 */
function printStillRunning(when: 'held' | 'settled'): void {
  if (when === 'held' && told) return;
  const again = told && when === 'settled';
  told = true;
  console.log(
    again
      ? `\nThe demo has settled; yoke and the forge are still up (Ctrl-C stops them and removes the data folder ${sandbox.dataDir}).`
      : `\nStill running (Ctrl-C stops it and removes its data folder ${sandbox.dataDir}).`,
  );
  console.log(`Dashboard: ${sandbox.dashboardUrl} (sign in with the operator token ${sandbox.apiToken})`);
  console.log(
    `The CLI: export YOKE_URL=${sandbox.yokeUrl} YOKE_TOKEN=${sandbox.apiToken}; then npm run yoke -- fleet report`,
  );
  console.log(
    `To act on the forge as @maintainer (label an issue, comment), use their personal token ${sandbox.maintainerToken}:`,
  );
  console.log(
    `  curl -H 'Authorization: token ${sandbox.maintainerToken}' -d '{"body":"/yoke status"}' ${sandbox.forge.url}/api/v3/repos/${DEMO_REPO}/issues/1/comments`,
  );
}

/**
 * With a budget: nothing is live and the last pass launched nothing, leaving work that waits for money, twice a
 * tick apart. The demo has gone as far as the day's money allows.
 */
async function waitsForMoney(): Promise<boolean> {
  const stuck = async () => {
    if ((await sandbox.runtime.store.runs.countLive()) > 0) return false;
    const last = ((await sandbox.api('GET', '/yoke/api/fleet')).body as FleetReport).lastPass;
    return last !== null && last.launched === 0 && last.waiting.some((w) => w.code === 'budget_reserved');
  };
  if (!(await stuck())) return false;
  await new Promise((r) => setTimeout(r, 2000));
  return stuck();
}

let seen = 0;
const showLaunches = async () => {
  const runs = await sandbox.runs();
  for (const r of runs.slice(seen))
    console.log(
      `  ${((r.launchedAt - started) / 1000).toFixed(1).padStart(5)}s  launched ${r.kind.padEnd(10)} ${r.subject}`,
    );
  seen = runs.length;
};
// A read that fails (the store closing at the end) shows nothing this time.
const progress = setInterval(() => void showLaunches().catch(() => undefined), 250);

let exitCode = 0;
const deadline = started + opts.timeout * 1000;
try {
  await sandbox.waitUntil(
    async () =>
      (await sandbox.done()) ||
      (opts.failAgent > 0 && (await sandbox.paused())) ||
      (opts.budget !== undefined && (await waitsForMoney())),
    deadline - Date.now(),
    opts.budget !== undefined
      ? 'every demo issue to be merged or stuck, or to wait for money'
      : 'every demo issue to be merged or stuck',
  );
  if (opts.budget !== undefined && !(await sandbox.done()))
    console.log(
      `\nThe day's budget of $${opts.budget} (YOKE_DAILY_USD) is spent or reserved: what is left waits for money until the budget starts again at midnight UTC. The end table says what waits, and why.`,
    );
  if (!(await sandbox.done()) && (await sandbox.paused())) {
    // Show the three-strikes pause and its recovery, as a maintainer would meet them.
    const state = (await sandbox.runtime.store.repos.get(DEMO_REPO))!;
    console.log(`\n${DEMO_REPO} paused after ${state.consecutiveFailures} consecutive AFK failures.`);
    const refused = await sandbox.api('POST', `/yoke/api/repos/${DEMO_REPO}/issues/1/start`);
    console.log(`A manual start is refused: HTTP ${refused.status} ${JSON.stringify(refused.body)}`);
    console.log('The maintainer comments "/yoke reset" on #1 ...');
    await sandbox.comment(1, '/yoke reset');
    await sandbox.waitUntil(
      async () => !(await sandbox.paused()),
      deadline - Date.now(),
      'yoke to process /yoke reset',
    );
    console.log('... and yoke un-pauses the repository.\n');
    await sandbox.waitUntil(() => sandbox.done(), deadline - Date.now(), 'every demo issue to be merged or stuck');
  }
} catch (err) {
  console.error(`\n${err instanceof Error ? err.message : err}`);
  exitCode = 1;
}
clearInterval(progress);
if (opts.agent) {
  // TR20: what the agent's sandbox let its tools reach, and what it refused, as the runner logged it.
  const said = new Set<string>();
  for (const r of sandbox.forge.runner.runs) {
    for (const line of (existsSync(r.logPath) ? readFileSync(r.logPath, 'utf8') : '').split('\n'))
      if (line.startsWith('network: ')) said.add(line.slice('network: '.length));
  }
  console.log(
    `\nThe agent's tools ran under bubblewrap. Network: ${[...said].join('; ') || 'no run logged its allowlist'}`,
  );
  const logs = sandbox.forge.runner.runs.map((r) => r.logPath).filter((p) => existsSync(p));
  console.log(
    `Transcripts: the agent's output is in each workflow run's log, ${logs.length} of them in ${dirname(logs[0] ?? sandbox.dataDir)}${opts.keepRunning ? '' : ' (removed with the data folder when the sandbox stops: add --keep-running to read them)'}.`,
  );
}

if (opts.deliver && exitCode === 0 && (await sandbox.done()) && !(await sandbox.paused())) {
  // After the merges: a deployment run through staging, scoped QA and production, driven by `yoke watch deploy`.
  console.log(
    `\nDelivery: ${DEMO_ATTACHMENTS.map(([i, p]) => `#${i} attaches ${p}`).join(', ')}; stages staging → staging-qa → production.`,
  );
  try {
    // --keep-running holds DEMO-1's manual case open for a person, so the live wait and its notice can be seen.
    const hold = opts.keepRunning
      ? {
          onHeld: (command: string) => {
            printStillRunning('held');
            console.log(
              `\nDeployment run waiting at staging-qa for DEMO-1's manual case reads-well. The dashboard's "Needs you" shows it; to answer it as @${REVIEWER}, from another terminal in this checkout of yoke:`,
            );
            console.log(`  YOKE_URL=${sandbox.yokeUrl} YOKE_TOKEN=${sandbox.personToken(REVIEWER)} ${command}`);
            console.log('Delivery then goes on to production.\n');
          },
        }
      : undefined;
    const d = await deliverDemo(sandbox, {
      dropAnswers: opts.dropAnswers,
      log: (l) => console.log(l),
      timeoutMs: hold ? 24 * 3600_000 : Math.max(10_000, deadline - Date.now()),
      ...(hold ? { hold } : {}),
    });
    console.log(`\ndeployment run ${d.run}: ${d.status}; the driver exited ${d.driverExits.join(', then ')}.`);
    console.log(
      `Deployments, their statuses and yoke's answer to production's protection rule: ${sandbox.forge.url}/${DEMO_REPO}/deployments`,
    );
    if (opts.dropAnswers)
      console.log(`${d.dropped} dispatch answers were dropped; ${d.recovered} result waits recovered them.`);
    if (d.status !== 'succeeded') exitCode = 1;
  } catch (err) {
    console.error(`\n${err instanceof Error ? err.message : err}`);
    exitCode = 1;
  }
}

const rows = await sandbox.summary();
console.log(`\n${formatSummary(rows)}\n\n${SUMMARY_LEGEND}\n`);
const merged = rows.filter((r) => r.state === 'merged').length;
const delivered = rows.filter((r) => r.closeout.startsWith('delivered')).length;
console.log(
  `${merged} of ${rows.length} issues merged${opts.deliver ? `, ${delivered} delivered and closed out` : ''} in ${((Date.now() - started) / 1000).toFixed(1)}s.`,
);
if (await sandbox.paused()) {
  console.log(`${DEMO_REPO} is paused. To recover: comment "/yoke reset" on an issue, or`);
  console.log(
    `  curl -X POST -H 'Authorization: Bearer ${sandbox.apiToken}' ${sandbox.yokeUrl}/yoke/api/repos/${DEMO_REPO}/reset`,
  );
}
// With a budget, an issue that waits for money has gone as far as the day allows: that is the demo's end, not a failure.
const unmet = rows.filter(
  (r) => r.state !== 'merged' && !(opts.budget !== undefined && r.wait?.startsWith('budget_reserved')),
).length;
if (unmet || (opts.deliver && opts.budget === undefined && delivered < rows.length)) exitCode = exitCode || 1;
if (otelUrl) {
  const first = await sandbox.runtime.store.issueTraces.get(DEMO_REPO, 1);
  if (receiver) {
    // What is still buffered goes out as yoke stops; what came so far is summarised.
    const spans = receiver.spans;
    const traces = new Set(spans.map((s) => s.traceId)).size;
    const ofFirst = first ? spans.filter((s) => s.traceId === first.traceId) : [];
    console.log(
      `Traces: ${spans.length} spans in ${traces} traces went to ${otelUrl}/v1/traces (a receiver in this process). #1's trace ${first?.traceId ?? '(none)'}: ${[...new Set(ofFirst.sort((a, b) => a.startMs - b.startMs).map((s) => s.name))].join(' → ')}.`,
    );
  } else
    console.log(
      `Traces went to ${otelUrl}/v1/traces (OTLP/HTTP). #1's trace id: ${first?.traceId ?? '(none)'}, from its label to its close-out.`,
    );
}

if (opts.keepRunning) {
  printStillRunning('settled');
} else {
  await stopAll(exitCode);
}
