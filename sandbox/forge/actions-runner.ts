import { cpSync, createWriteStream, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { parse as parseYaml } from 'yaml';
import { git, readFileAt, revParse } from '../git.js';
import { readOutputs } from './step-outputs.js';
import { runStep, type StepProcess } from './step-process.js';
import { evaluateCondition, grants, substitute, type ExprCtx } from './runner-expressions.js';
import { HttpError } from '../http-error.js';
import { needsOf, Workflow, type Job } from './workflow-file.js';
import type { OidcClaims } from './oidc-issuer.js';
import type { ForgeRepo, ForgeUser } from './state.js';

// The embedded forge's GitHub Actions: a workflow_dispatch reads the
// workflow file from the repository, and its `run` steps execute as local
// processes with the dispatch inputs, a GITHUB_TOKEN and an OIDC token
// endpoint, as a hosted runner would give them.

export interface WorkflowRunRecord {
  id: number;
  repo: string;
  workflow: string;
  workflowId: number;
  workflowName: string;
  displayTitle: string;
  runNumber: number;
  ref: string;
  headSha: string;
  inputs: Record<string, string>;
  /** Who dispatched it (the app's bot for yoke's runs), as `actor` and `triggering_actor` name them. */
  actor: ForgeUser;
  /** `waiting` while a job waits at an environment's protection rules, as GitHub shows it. */
  status: 'queued' | 'in_progress' | 'waiting' | 'completed';
  conclusion: 'success' | 'failure' | 'cancelled' | null;
  createdAt: number;
  updatedAt: number;
  startedAt: number | null;
  completedAt: number | null;
  /** The request token of the job that may mint OIDC tokens now (`id-token: write`), or null. */
  oidcRequestToken: string | null;
  /** Each job's result, as `needs.<job>.result` reads it. */
  jobs: Record<string, 'success' | 'failure' | 'cancelled' | 'skipped'>;
  /** Each job's outputs, as `needs.<job>.outputs.<name>` reads them. */
  jobOutputs: Record<string, Record<string, string>>;
  /** Artifacts uploaded by its jobs: name → its id, the folder kept, when. */
  artifacts: Record<string, { id: number; dir: string; createdAt: number }>;
  logPath: string;
}

/** What the runner needs of the forge it runs for, and nothing more. */
export interface RunnerHost {
  /** The forge's base URL (API, OIDC endpoints). */
  url(): string;
  now(): number;
  nextId(): number;
  repo(fullName: string): ForgeRepo | undefined;
  /** A GITHUB_TOKEN for one job, scoped to its repository, writing only if its permissions say so. */
  workflowToken(repo: string, write: boolean): string;
  /** Signs an OIDC token with the forge's Actions issuer. */
  mintOidc(claims: OidcClaims): string;
  /** The repository's numeric id, as tokens carry it. */
  repoId(fullName: string): number;
  /** DP03: a job targets an environment: its deployment is made, and the job waits until the environment's protection rules approve (or one rejects). */
  environmentGate(
    repo: ForgeRepo,
    run: WorkflowRunRecord,
    environment: string,
  ): Promise<{ approved: boolean; deploymentId: number }>;
  /** The job's deployment gets its outcome, as Actions writes it. */
  environmentEnded(repo: ForgeRepo, deploymentId: number, result: 'success' | 'failure' | 'cancelled'): void;
  /** A cancelled run's jobs stop waiting at protection rules. */
  cancelGates(runId: number): void;
  /** A run completed: GitHub sends `workflow_run.completed`. */
  runCompleted(run: WorkflowRunRecord): void;
}

export interface RunnerOptions {
  host: RunnerHost;
  workDir: string;
  extraEnv: Record<string, string>;
}

export class ActionsRunner {
  readonly runs: WorkflowRunRecord[] = [];
  private children = new Map<number, StepProcess>();
  private seq = 0;
  /** As on GitHub, a run's number counts the runs of its own workflow. */
  private runNumbers = new Map<string, number>();
  private workflowIds = new Map<string, number>();
  /** Tests hold a job here before it starts (a lander's report, while an attack is tried). */
  beforeJob: ((run: WorkflowRunRecord, job: string) => Promise<void>) | null = null;
  /** GitHub refuses a workflow file it cannot parse: this says why, or null (set when the forge starts). */
  lint: ((text: string, path: string) => string | null) | null = null;

  constructor(private readonly opts: RunnerOptions) {
    mkdirSync(opts.workDir, { recursive: true });
  }

  dispatch(
    repo: ForgeRepo,
    file: string,
    ref: string,
    inputs: Record<string, string>,
    actor: ForgeUser,
  ): WorkflowRunRecord {
    const sha = revParse(repo.gitDir, `refs/heads/${ref}`);
    if (!sha) throw new HttpError(422, `No ref found for: ${ref}`);
    const text = readFileAt(repo.gitDir, sha, `.github/workflows/${file}`);
    if (text === null) throw new HttpError(404, `Not Found: .github/workflows/${file} on ${ref}`);
    const refused = this.lint?.(text, `.github/workflows/${file}`) ?? null;
    if (refused) throw new HttpError(422, `Invalid workflow file: .github/workflows/${file}: ${refused}`);
    let yaml: unknown;
    try {
      yaml = parseYaml(text);
    } catch (err) {
      throw new HttpError(422, `Invalid workflow file: ${err instanceof Error ? err.message.split('\n')[0] : err}`);
    }
    const parsed = Workflow.safeParse(yaml);
    if (!parsed.success || !parsed.data.on.workflow_dispatch)
      throw new HttpError(422, "Workflow does not have 'workflow_dispatch' trigger");
    const wf = parsed.data;
    const declared = wf.on.workflow_dispatch?.inputs ?? {};
    for (const name of Object.keys(inputs))
      if (!(name in declared)) throw new HttpError(422, `Unexpected inputs provided: ["${name}"]`);
    const allInputs: Record<string, string> = {};
    for (const [name, spec] of Object.entries(declared)) {
      const value = inputs[name] ?? spec.default ?? '';
      if (spec.required && !value) throw new HttpError(422, `Required input '${name}' not provided`);
      allInputs[name] = value;
    }
    const key = `${repo.fullName}/${file}`;
    if (!this.workflowIds.has(key)) this.workflowIds.set(key, this.opts.host.nextId());
    const now = this.opts.host.now();
    const id = this.opts.host.nextId();
    this.runNumbers.set(key, (this.runNumbers.get(key) ?? 0) + 1);
    this.seq++;
    const run: WorkflowRunRecord = {
      id,
      repo: repo.fullName,
      workflow: file,
      workflowId: this.workflowIds.get(key)!,
      workflowName: wf.name ?? file,
      displayTitle: substitute(wf['run-name'] ?? wf.name ?? file, { inputs: allInputs }),
      runNumber: this.runNumbers.get(key)!,
      ref,
      headSha: sha,
      inputs: allInputs,
      actor,
      status: 'queued',
      conclusion: null,
      createdAt: now,
      updatedAt: now,
      startedAt: null,
      completedAt: null,
      oidcRequestToken: null,
      jobs: {},
      jobOutputs: {},
      artifacts: {},
      logPath: join(this.opts.workDir, `run-${id}.log`),
    };
    this.runs.push(run);
    setImmediate(() => void this.execute(repo, run, wf).catch(() => this.finish(run, 'failure')));
    return run;
  }

  private finish(run: WorkflowRunRecord, conclusion: 'success' | 'failure' | 'cancelled'): void {
    if (run.status === 'completed') return;
    const now = this.opts.host.now();
    Object.assign(run, { status: 'completed', conclusion, completedAt: now, updatedAt: now });
    this.opts.host.runCompleted(run);
  }

  /** Runs the jobs in order, each after the jobs it needs, each in its own workspace as on its own runner. */
  private async execute(repo: ForgeRepo, run: WorkflowRunRecord, wf: Workflow): Promise<void> {
    if (run.status === 'completed') return;
    const now = this.opts.host.now();
    Object.assign(run, { status: 'in_progress', startedAt: now, updatedAt: now });
    const log = createWriteStream(run.logPath);
    try {
      const pending = new Map(Object.entries(wf.jobs));
      while (pending.size && !this.isDone(run)) {
        const ready = [...pending].find(([, job]) => needsOf(job).every((n) => run.jobs[n] !== undefined));
        if (!ready) throw new Error('the workflow has a cycle in its job needs');
        const [name, job] = ready;
        pending.delete(name);
        const needs = Object.fromEntries(needsOf(job).map((n) => [n, run.jobs[n]!]));
        const needsFailed = Object.values(needs).some((r) => r !== 'success');
        const condCtx = {
          inputs: run.inputs,
          needs: Object.fromEntries(
            Object.entries(needs).map(([n, r]) => [n, { result: r, outputs: run.jobOutputs[n] ?? {} }]),
          ),
        } as unknown as ExprCtx;
        if (!evaluateCondition(job.if, condCtx, needsFailed)) {
          run.jobs[name] = 'skipped';
          continue;
        }
        // A job that targets an environment waits at its protection rules; a rejection fails the job, and its steps never run.
        const environment =
          job.environment === undefined
            ? null
            : substitute(typeof job.environment === 'string' ? job.environment : job.environment.name, condCtx);
        if (environment) Object.assign(run, { status: 'waiting', updatedAt: this.opts.host.now() });
        const gate = environment ? await this.opts.host.environmentGate(repo, run, environment) : null;
        if (this.isDone(run)) break;
        if (environment) Object.assign(run, { status: 'in_progress', updatedAt: this.opts.host.now() });
        if (gate && !gate.approved) {
          log.write(`job ${name}: the deployment to ${environment} was rejected by a protection rule\n`);
          run.jobs[name] = 'failure';
          continue;
        }
        await this.beforeJob?.(run, name);
        run.jobs[name] = await this.runJob(repo, run, wf, name, job, condCtx, log);
        if (gate)
          this.opts.host.environmentEnded(
            repo,
            gate.deploymentId,
            run.jobs[name] as 'success' | 'failure' | 'cancelled',
          );
      }
      const results = Object.values(run.jobs);
      this.finish(run, results.includes('failure') ? 'failure' : 'success');
    } finally {
      log.end();
    }
  }

  private async runJob(
    repo: ForgeRepo,
    run: WorkflowRunRecord,
    wf: Workflow,
    jobName: string,
    job: Job,
    exprCtx: ExprCtx,
    log: NodeJS.WritableStream,
  ): Promise<'success' | 'failure' | 'cancelled'> {
    const workspace = mkdtempSync(join(this.opts.workDir, `ws-${run.id}-`));
    const runnerTemp = mkdtempSync(join(this.opts.workDir, `tmp-${run.id}-`));
    const stepOutputs: Record<string, { outputs: Record<string, string> }> = {};
    const forgeUrl = this.opts.host.url();
    const may = grants(job.permissions ?? wf.permissions);
    const github = {
      token: this.opts.host.workflowToken(repo.fullName, may.write),
      ref: `refs/heads/${run.ref}`,
      sha: run.headSha,
      repository: repo.fullName,
      run_id: String(run.id),
      api_url: `${forgeUrl}/api/v3`,
      server_url: forgeUrl,
      workspace,
    };
    // Only a job granted `id-token: write` can ask the runner for an OIDC token.
    run.oidcRequestToken = may.idToken ? randomBytes(16).toString('hex') : null;
    const ctx = {
      ...exprCtx,
      github,
      runner: { temp: runnerTemp },
      secrets: repo.secrets,
      steps: stepOutputs,
    } as unknown as ExprCtx;
    let failed = false;
    try {
      for (const step of job.steps) {
        if (this.isDone(run)) return 'cancelled'; // cancelled while an earlier step ran
        if (!evaluateCondition(step.if, ctx, failed)) continue;
        if (step.uses?.startsWith('actions/upload-artifact')) {
          const name = substitute(String(step.with?.name ?? 'artifact'), ctx);
          const from = substitute(String(step.with?.path ?? ''), ctx);
          const keep = join(this.opts.workDir, `artifact-${run.id}-${name}`);
          // As upload-artifact v4: a name is uploaded once per workflow run; a second upload of it fails.
          if (run.artifacts[name]) {
            if (!step['continue-on-error']) failed = true;
            continue;
          }
          try {
            cpSync(from, keep, { recursive: true });
            run.artifacts[name] = { id: this.opts.host.nextId(), dir: keep, createdAt: this.opts.host.now() };
          } catch {
            if (String(step.with?.['if-no-files-found'] ?? 'warn') === 'error') failed = true;
          }
          continue;
        }
        if (step.uses?.startsWith('actions/download-artifact')) {
          const name = substitute(String(step.with?.name ?? 'artifact'), ctx);
          const kept = run.artifacts[name]?.dir;
          if (kept) cpSync(kept, substitute(String(step.with?.path ?? workspace), ctx), { recursive: true });
          else if (!step['continue-on-error']) failed = true;
          continue;
        }
        if (step.uses?.startsWith('actions/checkout')) {
          const ref = substitute(String(step.with?.ref ?? ''), ctx) || run.ref;
          const dir = join(workspace, substitute(String(step.with?.path ?? ''), ctx));
          git(this.opts.workDir, ['clone', '--quiet', repo.gitDir, dir]);
          git(dir, ['checkout', '--quiet', ref]);
          // As on GitHub: origin is the repository's URL, reached only with the job's own token, and only if checkout persisted it.
          git(dir, ['remote', 'set-url', 'origin', `${forgeUrl}/${repo.fullName}.git`]);
          if (step.with?.['persist-credentials'] !== false)
            git(dir, [
              'config',
              'http.extraheader',
              `AUTHORIZATION: basic ${Buffer.from(`x-access-token:${github.token}`).toString('base64')}`,
            ]);
          continue;
        }
        if (!step.run) continue;
        // A hosted runner's environment: nothing of the machine's own beyond PATH and HOME.
        const env: Record<string, string> = {
          PATH: process.env.PATH ?? '/usr/bin:/bin',
          HOME: process.env.HOME ?? workspace,
          ...this.opts.extraEnv,
          CI: 'true',
          GITHUB_ACTIONS: 'true',
          GITHUB_TOKEN: github.token,
          GITHUB_API_URL: github.api_url,
          GITHUB_SERVER_URL: forgeUrl,
          GITHUB_REPOSITORY: repo.fullName,
          GITHUB_RUN_ID: github.run_id,
          GITHUB_RUN_NUMBER: String(run.runNumber),
          GITHUB_REF: github.ref,
          GITHUB_SHA: run.headSha,
          GITHUB_WORKSPACE: workspace,
          RUNNER_TEMP: runnerTemp,
        };
        const outputFile = join(runnerTemp, `output-${this.seq}-${Math.random().toString(36).slice(2)}`);
        writeFileSync(outputFile, '');
        env.GITHUB_OUTPUT = outputFile;
        if (run.oidcRequestToken) {
          env.ACTIONS_ID_TOKEN_REQUEST_URL = `${forgeUrl}/_actions/oidc/token?run=${run.id}`;
          env.ACTIONS_ID_TOKEN_REQUEST_TOKEN = run.oidcRequestToken;
        }
        for (const [k, v] of Object.entries({ ...job.env, ...step.env })) env[k] = substitute(String(v), ctx);
        const cwd = join(workspace, step['working-directory'] ?? '');
        const code = await runStep(substitute(step.run!, ctx), { cwd, env }, log, (child) =>
          this.children.set(run.id, child),
        );
        this.children.delete(run.id);
        if (step.id) stepOutputs[step.id] = { outputs: readOutputs(outputFile) };
        if (code !== 0 && !step['continue-on-error']) failed = true;
      }
      run.jobOutputs[jobName] = Object.fromEntries(
        Object.entries(job.outputs ?? {}).map(([k, v]) => [k, substitute(v, ctx)]),
      );
      return failed ? 'failure' : 'success';
    } finally {
      run.oidcRequestToken = null;
      rmSync(workspace, { recursive: true, force: true });
      rmSync(runnerTemp, { recursive: true, force: true });
    }
  }

  private isDone(run: WorkflowRunRecord): boolean {
    return run.status === 'completed';
  }

  cancel(run: WorkflowRunRecord): void {
    const child = this.children.get(run.id);
    this.finish(run, 'cancelled');
    this.opts.host.cancelGates(run.id);
    if (child?.pid) {
      try {
        process.kill(-child.pid, 'SIGTERM');
      } catch {
        /* already gone */
      }
    }
  }

  /** The runner's OIDC token endpoint (ACTIONS_ID_TOKEN_REQUEST_URL). */
  oidcToken(url: URL, authorization: string): string | null {
    const run = this.runs.find((r) => String(r.id) === url.searchParams.get('run'));
    const bearer = /^bearer\s+(.+)$/i.exec(authorization)?.[1];
    if (!run || run.status !== 'in_progress' || !run.oidcRequestToken || bearer !== run.oidcRequestToken) return null;
    return this.opts.host.mintOidc({
      aud: url.searchParams.get('audience') ?? this.opts.host.url(),
      repository: run.repo,
      repository_id: String(this.opts.host.repoId(run.repo)),
      run_id: String(run.id),
      workflow: run.workflowName,
      workflow_ref: `${run.repo}/.github/workflows/${run.workflow}@refs/heads/${run.ref}`,
      ref: `refs/heads/${run.ref}`,
      event_name: 'workflow_dispatch',
      actor: run.actor.login,
    });
  }

  stopAll(): void {
    for (const run of this.runs) if (run.status !== 'completed') this.cancel(run);
  }
}
