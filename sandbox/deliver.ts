import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkoutIo, commandContainmentProblem } from '../src/cli/exec.js';
import { runCli } from '../src/cli/main.js';
import { DEMO_AGENT, DEMO_ATTACHMENTS, DEMO_REPO, HOSTING_ENV, MAINTAINER, REVIEWER } from './demo-repo.js';
import { builtCli } from './bundles.js';
import { startDropProxy } from './drop-proxy.js';
import type { Sandbox } from './sandbox.js';

// The delivery half of the demo, after the merges: `yoke watch deploy` as a
// child process over loopback HTTP, the demo agent answering its notice, a
// second maintainer recording the manual case and approving, and a flaky
// shared case retried at the pinned commit once the driver stops with its triage.

const STAGE = 'staging-qa';

/** TR30: on a machine without bubblewrap the demo's QA cases run uncontained, and the sandbox says so; an operator's CLI would refuse. */
function uncontainedHere(log: (l: string) => void): Record<string, string> {
  const problem = commandContainmentProblem(process.env.YOKE_BWRAP || 'bwrap');
  if (!problem) return {};
  log(
    `  (${problem}: the demo's QA cases run without a pid namespace of their own; install bubblewrap to see them contained)`,
  );
  return { YOKE_COMMANDS_UNCONTAINED: '1' };
}

export interface DeliveryOptions {
  dropAnswers: number;
  log: (line: string) => void;
  timeoutMs: number;
  /**
   * Leave DEMO-1's manual case for a person (`--keep-running`): the run waits
   * at staging-qa, its notice out, until someone records the case; `onHeld`
   * is told the command that answers it.
   */
  hold?: { onHeld: (command: string) => void };
}

/** The command that answers the held manual case, as the reviewer runs it from a checkout. */
export const HELD_CASE_COMMAND = `npm run yoke -- qa case run --item DEMO-1 --stage staging-qa --case reads-well --verdict pass --evidence 'Opened staging: shout("hi") reads "HI!".'`;

export interface DeliveryResult {
  run: string;
  status: string;
  /** The driver's exit codes, in order: 3 (the shared plan's triage), then 0. */
  driverExits: number[];
  /** Answers the proxy dropped, and the result waits that recovered them. */
  dropped: number;
  recovered: number;
}

/** The maintainer attaches the demo's plans as the issues are opened. */
export async function attachDemoPlans(sandbox: Sandbox): Promise<void> {
  // Found by poll, a command counts only if written after yoke first saw the repository (no webhook brings it earlier).
  await sandbox.waitUntil(
    async () => (await sandbox.runtime.store.repos.get(DEMO_REPO)) !== undefined,
    30_000,
    'yoke to see the demo repository',
  );
  for (const [issue, plan] of DEMO_ATTACHMENTS) await sandbox.comment(issue, `/yoke qa attach ${plan}`);
}

export async function deliverDemo(sandbox: Sandbox, opts: DeliveryOptions): Promise<DeliveryResult> {
  const deadline = Date.now() + opts.timeoutMs;
  await sandbox.waitUntil(
    async () => (await sandbox.runtime.store.qa.attachments(DEMO_REPO)).length === DEMO_ATTACHMENTS.length,
    deadline - Date.now(),
    'the QA plans to be attached',
  );
  const checkout = mkdtempSync(join(tmpdir(), 'yoke-demo-checkout-'));
  const proxy = opts.dropAnswers > 0 ? await startDropProxy(sandbox.yokeUrl, opts.dropAnswers) : null;
  const yokeUrl = proxy?.url ?? sandbox.yokeUrl;
  const recovered = { count: 0 };
  let holderDone = false;
  try {
    execFileSync('git', ['clone', '--quiet', sandbox.repo.gitDir, checkout]);
    // The people and the agent, each through the CLI in the checkout, as they would on their machines.
    // The QA cases read the demo's hosting back: its folder is passed to their commands, as an operator passes a KUBECONFIG.
    const hosting = {
      [HOSTING_ENV]: join(sandbox.dataDir, 'state'),
      YOKE_PASS_ENV: HOSTING_ENV,
      // TR30: a command writes only its checkout and scratch, and what the operator names: the demo's deploy writes its hosting there.
      YOKE_COMMAND_WRITABLE: join(sandbox.dataDir, 'state'),
      ...uncontainedHere(opts.log),
    };
    const cli = (login: string, args: string[]) =>
      runCli(
        args,
        checkoutIo(
          checkout,
          { YOKE_URL: sandbox.yokeUrl, YOKE_TOKEN: sandbox.personToken(login), YOKE_LOGIN: login, ...hosting },
          (l) => opts.log(`    ${login}$ ${l}`),
          (l) => opts.log(`    ${login}! ${l}`),
        ),
      );
    const answerNotice = async (): Promise<void> => {
      const pr = [...sandbox.repo.issues.values()].find((i) => i.pull && i.body.includes('Closes #1'));
      // The holder's notice, on the claim PR: the agent that opened it does what it says.
      const notice =
        pr &&
        sandbox.repo.comments.find(
          (c) =>
            c.issueNumber === pr.number &&
            c.body.includes('is waiting at stage') &&
            c.body.includes('yoke qa plan run --item'),
        );
      if (!pr || !notice || holderDone) return;
      holderDone = true;
      const command = /`(yoke qa plan run [^`]+)`/.exec(notice.body)![1]!;
      opts.log(`  ${notice.body.split(' ')[0]} was told on #${pr.number}; the demo agent runs: ${command}`);
      await cli(DEMO_AGENT, command.split(' ').slice(1));
      if (opts.hold) {
        opts.log(
          `  The manual case reads-well of DEMO-1 waits for ${REVIEWER}: the run stays at ${STAGE} until it is recorded.`,
        );
        opts.hold.onHeld(HELD_CASE_COMMAND);
        const run = (await sandbox.runtime.store.deploymentRuns.list()).find((r) => r.status === 'active');
        await sandbox.waitUntil(
          async () =>
            (await sandbox.runtime.store.qa.verdicts(run ? [run.id] : [])).some(
              (v) => v.caseId === 'reads-well' && v.result === 'pass',
            ),
          24 * 3600_000,
          'someone to record the manual case reads-well',
        );
        opts.log(`  The manual case was recorded; ${REVIEWER} approves #${pr.number}`);
      } else {
        opts.log(`  ${REVIEWER} checks staging, records the manual case and approves #${pr.number}`);
        await cli(REVIEWER, [
          'qa',
          'case',
          'run',
          '--item',
          'DEMO-1',
          '--stage',
          STAGE,
          '--case',
          'reads-well',
          '--verdict',
          'pass',
          '--evidence',
          'Opened staging: shout("hi") reads "HI!".',
        ]);
      }
      await fetch(`${sandbox.forge.url}/api/v3/repos/${DEMO_REPO}/pulls/${pr.number}/reviews`, {
        method: 'POST',
        headers: {
          authorization: `token ${sandbox.forge.personalToken(REVIEWER)}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ event: 'APPROVE', body: 'Checked on staging.' }),
      });
    };
    let busy = false;
    const watcher = setInterval(() => {
      if (busy || holderDone) return;
      busy = true;
      void answerNotice().finally(() => (busy = false));
    }, 200);

    const exits: number[] = [];
    let runId = '';
    try {
      for (let attempt = 0; attempt < 4; attempt++) {
        // A wait held for a person may last hours: the driver checks it every few seconds, not twice a second.
        const poll = opts.hold ? '3' : '0.5';
        const args = runId
          ? ['watch', 'deploy', '--json', '--driver', 'demo-driver', '--poll-seconds', poll, '--', runId]
          : ['watch', 'deploy', DEMO_REPO, '--json', '--driver', 'demo-driver', '--poll-seconds', poll];
        opts.log(
          `  $ yoke ${args.join(' ')}${proxy ? `   (through a proxy that drops ${opts.dropAnswers} dispatch answers)` : ''}`,
        );
        const { code, events } = await driveOnce(
          args,
          checkout,
          { YOKE_URL: yokeUrl, YOKE_TOKEN: sandbox.apiToken, YOKE_LOGIN: MAINTAINER, ...hosting },
          opts.log,
          deadline,
        );
        exits.push(code);
        runId ||= String(events.find((e) => e.event === 'run')?.run ?? '');
        recovered.count += events.filter((e) => e.event === 'recover').length;
        if (code === 0 || !runId) break;
        const stop = events.find((e) => e.event === 'stop');
        if (code !== 3 || !stop) break;
        // The triage names the pinned commit: a flaky failure is retried there, then the driver resumes.
        const retry = /retry: git checkout \S+ && (yoke qa plan run .+)/.exec(String(stop.recovery))?.[1];
        if (!retry) break;
        opts.log(`  ${MAINTAINER} reads the triage: the failure is flaky, so the pinned commit is retried: ${retry}`);
        await cli(MAINTAINER, retry.split(' ').slice(1));
      }
    } finally {
      clearInterval(watcher);
    }
    const run = await sandbox.runtime.store.deploymentRuns.get(runId);
    return {
      run: runId,
      status: run?.status ?? 'none',
      driverExits: exits,
      dropped: proxy?.dropped ?? 0,
      recovered: recovered.count,
    };
  } finally {
    await proxy?.close();
    rmSync(checkout, { recursive: true, force: true });
  }
}

type Event = { event: string } & Record<string, unknown>;

/** Runs the driver as a child process (the CLI bundled once: bundles.ts), printing its progress; resolves with its exit code and its events. */
async function driveOnce(
  args: string[],
  cwd: string,
  env: Record<string, string>,
  log: (l: string) => void,
  deadline: number,
): Promise<{ code: number; events: Event[] }> {
  const cli = await builtCli();
  return new Promise((done) => {
    const child = spawn(process.execPath, [cli, ...args], {
      cwd,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const events: Event[] = [];
    let buffered = '';
    // A wait held open for a person repeats the same gate check; it is said once.
    let last = '';
    const say = (line: string) => {
      if (line !== last) log(line);
      last = line;
    };
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      const lines = buffered.split('\n');
      buffered = lines.pop()!;
      for (const line of lines.filter(Boolean)) {
        try {
          const e = JSON.parse(line) as Event;
          events.push(e);
          say(`    driver: ${describeEvent(e)}`);
        } catch {
          say(`    driver: ${line}`);
        }
      }
    });
    child.stderr.on('data', () => {});
    const timer = setTimeout(() => child.kill('SIGTERM'), Math.max(1_000, deadline - Date.now()));
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code: code ?? 1, events });
    });
  });
}

function describeEvent(e: Event): string {
  switch (e.event) {
    case 'gate':
      return `gate check: ${e.state}${(e.closed as string[]).length ? `; closed out ${(e.closed as string[]).join(', ')}` : ''}${(e.notices as { to: string; subject: string }[]).map((n) => `; told ${n.to} about ${n.subject}`).join('')}`;
    case 'stop':
      return `stopped: ${String(e.message)}`;
    case 'recover':
      return `the answer to ${e.request} was lost; waiting on it (${e.wait})`;
    default:
      return Object.entries(e)
        .filter(([k]) => !['event', 'run', 'waits'].includes(k))
        .reduce((s, [k, v]) => `${s} ${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`, String(e.event));
  }
}
