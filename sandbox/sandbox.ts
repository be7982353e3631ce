import type { FleetReport } from '../src/http/operator/report.js';
import type { ChildProcess } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { YokeRuntime } from '../src/app.js';
import { startYoke, type StartedYoke } from '../src/server.js';
import { isPaused } from '../src/fleet/repo-state.js';
import type { Run } from '../src/store/fleet/runs.js';
import {
  DEMO_AGENT,
  DEMO_FILES,
  DEMO_REPO,
  DEMO_TASKS,
  MAINTAINER,
  ONLOOKER,
  REVIEWER,
  STATE_TOKEN,
  YOKE_URL_TOKEN,
  demoRunScript,
  shippedWorkflow,
} from './demo-repo.js';
import { AGENT_CLI_DIR, agentCliBin, demoScript } from './agent-clis.js';
import { builtAgent } from './bundles.js';
import { seedDemoRepo } from './demo-seed.js';
import { commandRunEnv } from './command-run.js';
import { DemoMaintainer } from './maintainer.js';
import { ScriptedModel } from './models/scripted-model.js';
import { EmbeddedForge, type ForgeRepo } from './forge-server.js';
import { findPostgresBin, startPostgres, type LocalPostgres } from './postgres.js';
import { startYokeProcess, stopYokeProcess } from './yoke-process.js';
import { summarizeIssues, type IssueSummary } from './summary.js';
import type { SandboxOptions } from './options.js';
import { freePort } from './yoke-process.js';

// The whole pipeline on one machine: an embedded forge seeded with the demo repository,
// and yoke started against it through GHE_HOST, as a GitHub Enterprise Server deployment would be.

export type { SandboxOptions } from './options.js';

/** One line of yoke's log, as pino wrote it. */
export interface LogLine {
  level: number;
  msg: string;
  [field: string]: unknown;
}

const LEVELS = { warn: 40, error: 50 } as const;

// Long enough for yoke's start checks (TR08); the sandbox is loopback-only.
const WEBHOOK_SECRET = 'sandbox-webhook-secret-0123456789abcdef';

export class Sandbox {
  forge!: EmbeddedForge;
  repo!: ForgeRepo;
  yoke!: StartedYoke;
  runtime!: YokeRuntime;
  readonly dataDir: string;
  readonly apiToken = 'sandbox-operator-token-0123456789abcdef';
  /** TR11: a person's own yoke token (YOKE_PERSON_TOKENS): what they record is recorded as them. */
  personToken(login: string): string {
    return `sandbox-${login}-token-0123456789abcdef0123`;
  }

  /** The web dashboard, where `--keep-running` sends people (sign in with apiToken). */
  get dashboardUrl(): string {
    return `${this.yokeUrl}/yoke`;
  }
  maintainerToken = '';
  private agentToken = '';
  /** The demo agent the command launcher starts, bundled (bundles.ts). */
  private agentScript = '';
  private yokePort = 0;
  private appKey = generateKeyPairSync('rsa', { modulusLength: 2048 });

  constructor(readonly opts: SandboxOptions) {
    this.dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'yoke-sandbox-'));
  }

  get tasks() {
    return this.opts.tasks ?? DEMO_TASKS.slice(0, this.opts.issues ?? DEMO_TASKS.length);
  }

  get yokeUrl(): string {
    return `http://127.0.0.1:${this.yokePort}`;
  }

  /** With `postgres`: the server, yoke's database on it, and the second yoke process (where runs report). */
  private pg: LocalPostgres | null = null;
  databaseUrl: string | null = null;
  private second: ChildProcess | null = null;
  private secondPort = 0;
  /** Where runs send their reports: the second yoke with `postgres`, else this one. */
  get reportUrl(): string {
    return this.opts.postgres ? `http://127.0.0.1:${this.secondPort}` : this.yokeUrl;
  }

  /** The scripted model a real agent talks to (with `agent`). */
  model: ScriptedModel | null = null;
  /** The demo's maintainer, who reviews claim PRs of tasks with a review (TR33). */
  maintainer: DemoMaintainer | null = null;

  /** With a real agent: its shipped workflow, its CLI on the runner's PATH, and repository secrets pointing it at the scripted model. */
  private async agentSetup(): Promise<{
    files: Record<string, string>;
    env: Record<string, string>;
    secrets: Record<string, string>;
  }> {
    const agent = this.opts.agent;
    if (!agent) return { files: {}, env: {}, secrets: {} };
    const bin = agentCliBin(agent === 'claude-code' ? 'claude' : 'codex');
    if (!bin)
      throw new Error(
        `The ${agent} CLI is not installed: run \`bash bin/install-agents\` (it fills ${AGENT_CLI_DIR}).`,
      );
    this.model = this.opts.model ?? new ScriptedModel({ script: demoScript(this.tasks) });
    const url = await this.model.start();
    // Shaped as real keys are, so what finds a real one (TR16) finds these.
    const secrets: Record<string, string> =
      agent === 'claude-code'
        ? { ANTHROPIC_API_KEY: 'sk-ant-sandbox-key-0123456789', ANTHROPIC_BASE_URL: url }
        : { CODEX_API_KEY: 'sk-sandbox-key-0123456789abcdef', OPENAI_BASE_URL: `${url}/v1`, CODEX_MODEL: 'gpt-5.5' };
    return {
      files: { '.github/workflows/yoke-run.yml': shippedWorkflow(agent) },
      env: { PATH: `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}` },
      secrets,
    };
  }

  async start(): Promise<void> {
    this.yokePort = await freePort();
    if (this.opts.postgres) {
      const bin = findPostgresBin();
      if (!bin)
        throw new Error(
          '--postgres needs PostgreSQL: `apt-get install -y postgresql` (its programs are looked for on PATH and in /usr/lib/postgresql/*/bin).',
        );
      this.pg = await startPostgres({ bin });
      this.databaseUrl = await this.pg.createDatabase('yoke');
      this.secondPort = await freePort();
    }
    const agent = await this.agentSetup();
    if (this.opts.launcher === 'command') this.agentScript = await builtAgent();
    mkdirSync(join(this.dataDir, 'state'), { recursive: true });
    this.forge = new EmbeddedForge({
      dataDir: this.dataDir,
      appId: 1,
      appSlug: 'yoke-sandbox',
      appPublicKey: this.appKey.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
      runnerEnv: agent.env, // what a runner has installed (an agent CLI on PATH); nothing of the sandbox's own
    });
    this.forge.recordResponses = this.opts.recordResponses ?? false;
    await this.forge.start();
    this.maintainerToken = this.forge.personalToken(MAINTAINER);
    this.agentToken = this.forge.personalToken(DEMO_AGENT);
    this.forge.user(MAINTAINER);
    this.repo = seedDemoRepo(this.forge, {
      files: this.seededFiles(agent.files),
      secrets: agent.secrets,
      tasks: this.tasks,
    });
    // TR33: the maintainer requests changes on the claim PR of a task with a review, and approves the fix.
    this.maintainer = new DemoMaintainer({
      forgeUrl: this.forge.url,
      repo: DEMO_REPO,
      token: this.maintainerToken,
      tasks: this.tasks,
      botLogin: `${this.forge.opts.appSlug}[bot]`,
    });
    this.forge.watchers.push((e) => this.maintainer!.watch(e));
    // Reaching through GitHub, yoke needs no inbound connection: no webhook is sent to it at all.
    if (!this.reachesThroughGitHub)
      this.forge.webhook = { url: `${this.yokeUrl}/api/github/webhooks`, secret: WEBHOOK_SECRET };
    await this.startYoke();
  }

  /** The demo's files, its agent in run.sh (this sandbox's tasks), a real agent's workflow, the test's own; the state folder and yoke's URL filled in. */
  private seededFiles(agentFiles: Record<string, string>): Record<string, string> {
    const runSh = demoRunScript({
      tasks: this.tasks,
      failFirst: this.opts.failAgent,
      delayMs: this.opts.agentDelayMs ?? 0,
    });
    const files = { ...DEMO_FILES, '.github/yoke/run.sh': runSh, ...agentFiles, ...this.opts.files };
    const state = join(this.dataDir, 'state');
    return Object.fromEntries(
      Object.entries(files).map(([path, text]) => [
        path,
        text.replaceAll(STATE_TOKEN, state).replaceAll(YOKE_URL_TOKEN, this.yokeUrl),
      ]),
    );
  }

  /** Runs hand their results back through the forge, and call no URL of yoke's. */
  get reachesThroughGitHub(): boolean {
    return this.opts.launcher === 'actions' && this.opts.runsReach === 'github';
  }

  /** yoke's environment here: what a database door on this machine would be given. */
  appEnv(): Record<string, string> {
    return this.env();
  }

  /** What the database door is given on this machine: the app key as a file (TR30), never in its environment. */
  doorEnv(): Record<string, string> {
    const { PRIVATE_KEY: key, ...env } = this.env();
    const path = join(this.dataDir, 'app-key.pem');
    writeFileSync(path, key!, { mode: 0o600 });
    return { ...env, PRIVATE_KEY_PATH: path };
  }

  private env(): Record<string, string> {
    const forgeHost = new URL(this.forge.url).host;
    const env: Record<string, string> = {
      APP_ID: '1',
      PRIVATE_KEY: this.appKey.privateKey.export({ type: 'pkcs1', format: 'pem' }).toString(),
      WEBHOOK_SECRET,
      GHE_HOST: forgeHost,
      GHE_PROTOCOL: 'http',
      HOST: '127.0.0.1',
      PORT: String(this.yokePort),
      LOG_LEVEL: this.opts.logLevel ?? 'warn',
      NODE_ENV: 'development',
      YOKE_DB_PATH: join(this.dataDir, 'yoke.db'),
      ...(this.databaseUrl ? { YOKE_DATABASE_URL: this.databaseUrl } : {}),
      YOKE_GLOBAL_CAP: '2',
      YOKE_TICK_SECONDS: String(this.opts.tickSeconds ?? 2),
      YOKE_REAPER_SECONDS: String(this.opts.reaperSeconds ?? 1),
      // Runs report where yoke's public URL says: with --postgres, the second process.
      YOKE_PUBLIC_URL: this.reportUrl,
      YOKE_API_TOKENS: this.apiToken,
      YOKE_PERSON_TOKENS: [MAINTAINER, DEMO_AGENT, REVIEWER, ONLOOKER]
        .map((l) => `${l}:${this.personToken(l)}`)
        .join(','),
      YOKE_DASHBOARD_REFRESH_SECONDS: '1',
      YOKE_OIDC_ISSUER: `${this.forge.url}/_actions/oidc`,
      YOKE_LAUNCHER: this.opts.launcher,
      // The embedded forge has no secondary rate limits to respect.
      YOKE_THROTTLE: 'off',
      ...this.opts.env,
    };
    if (this.reachesThroughGitHub) {
      // Runs are told no address of yoke's: their tokens name it as the app (yoke-app-1).
      delete env.YOKE_PUBLIC_URL;
      env.YOKE_RUNS_REACH = 'github';
    }
    if (this.opts.launcher === 'command')
      Object.assign(
        env,
        commandRunEnv({
          agent: this.agentScript,
          forgeUrl: this.forge.url,
          agentToken: this.agentToken,
          gitDir: this.repo.gitDir,
          dataDir: this.dataDir,
          failAgent: this.opts.failAgent,
          agentDelayMs: this.opts.agentDelayMs ?? 0,
        }),
      );
    return env;
  }

  /** yoke's log lines, when captured. */
  readonly logLines: LogLine[] = [];

  /** The captured lines at a level or above whose message contains `text`. */
  logged(level: keyof typeof LEVELS, text = ''): LogLine[] {
    return this.logLines.filter((l) => l.level >= LEVELS[level] && l.msg.includes(text));
  }

  private logSink(): Writable | undefined {
    if ((this.opts.log ?? 'capture') === 'console') return undefined;
    const lines = this.logLines;
    return new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const text of chunk.toString('utf8').split('\n').filter(Boolean)) {
          try {
            lines.push(JSON.parse(text) as LogLine);
          } catch {
            lines.push({ level: 50, msg: text });
          }
        }
        done();
      },
    });
  }

  async startYoke(): Promise<void> {
    // The second yoke first: it is where runs report, and the first launches as soon as it is up.
    if (this.opts.postgres && !this.second) await this.startSecondYoke();
    this.yoke = await startYoke(this.env(), { destination: this.logSink() });
    this.runtime = await this.yoke.runtime;
  }

  /** The second yoke: its own process (`npm start`'s entry), on the same PostgreSQL, another port. */
  private async startSecondYoke(): Promise<void> {
    this.second = await startYokeProcess({ ...this.env(), PORT: String(this.secondPort) }, this.reportUrl);
  }

  /** Stops yoke (not the forge, nor the runs out there) and starts it again on the same database. */
  async restartYoke(): Promise<void> {
    await this.yoke.stop();
    await this.startYoke();
  }

  /** Comments on an issue or PR as the maintainer, through the forge's API. */
  async comment(number: number, body: string): Promise<void> {
    const res = await fetch(`${this.forge.url}/api/v3/repos/${DEMO_REPO}/issues/${number}/comments`, {
      method: 'POST',
      headers: { authorization: `token ${this.maintainerToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ body }),
    });
    if (!res.ok) throw new Error(`comment failed: ${res.status}`);
  }

  async runs(): Promise<Run[]> {
    return (await this.runtime.store.runs.listAll(10_000)).reverse();
  }

  async paused(): Promise<boolean> {
    const state = await this.runtime.store.repos.get(DEMO_REPO);
    return state !== undefined && isPaused(state);
  }

  /** Merged; stuck (fix-forward gave up, or the repo is paused with nothing left in flight for it); or still open. */
  async issueState(number: number): Promise<IssueSummary['state']> {
    const issue = this.repo.issues.get(number)!;
    if (issue.state === 'closed') return 'merged';
    const pulls = [...this.repo.issues.values()].filter(
      (i) => i.pull && i.state === 'open' && new RegExp(`Closes #${number}\\b`).test(i.body),
    );
    if (pulls.some((p) => p.labels.includes('yoke:stuck'))) return 'stuck';
    // Landers and fixes go on while paused: only an issue without a claim PR is stuck by a pause.
    if (
      (await this.paused()) &&
      pulls.length === 0 &&
      !(await this.runtime.store.runs.listLive()).some((r) => r.issueNumber === number)
    )
      return 'stuck';
    return 'open';
  }

  /** What the operator API answers; the sandbox shows it. */
  async api(method: string, path: string): Promise<{ status: number; body: unknown }> {
    const res = await fetch(`${this.yokeUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${this.apiToken}` },
    });
    return { status: res.status, body: await res.json() };
  }

  /** What the last pass passed over, as the fleet report says it (each with its code and message). */
  async waiting(): Promise<{ subject: string | null; code: string; message: string }[]> {
    const r = await this.api('GET', '/yoke/api/fleet');
    return (r.body as FleetReport).lastPass?.waiting ?? [];
  }

  async done(): Promise<boolean> {
    const states = await Promise.all(this.tasks.map((_, i) => this.issueState(i + 1)));
    return states.every((s) => s !== 'open');
  }

  async waitUntil(pred: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
    const until = Date.now() + timeoutMs;
    while (!(await pred())) {
      if (Date.now() > until) throw new Error(`timed out after ${timeoutMs / 1000}s waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  async summary(): Promise<IssueSummary[]> {
    return summarizeIssues({
      waiting: await this.waiting(),
      runs: await this.runs(),
      store: this.runtime.store,
      tasks: this.tasks,
      repo: this.repo,
      issueState: (n) => this.issueState(n),
    });
  }

  async stop(): Promise<void> {
    if (this.second) await stopYokeProcess(this.second);
    await this.yoke?.stop();
    await this.forge?.stop();
    await this.model?.stop();
    await this.pg?.stop();
    this.removeData();
  }

  /** Removes the data folder the sandbox made for itself (never one it was given). */
  removeData(): void {
    // A run's process may still be writing its workspace as the folder goes: retried, not left behind.
    if (!this.opts.dataDir) rmSync(this.dataDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
  }
}
