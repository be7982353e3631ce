import type { Forge, RepoRef } from '../forge/types.js';
import type { Run } from '../store/fleet/runs.js';
import { limitsJson, type Launcher, type LaunchSpec, type Liveness } from './launcher.js';

// Runs on GitHub Actions: a workflow_dispatch whose `run_id` input names the
// yoke run. The workflow's `run-name` carries that id, which is how the
// dispatched workflow run is found again (the dispatch answer has no id).

export interface ActionsLauncherOptions {
  forge: Forge;
  now: () => number;
  /** How long a dispatch may go unseen before it counts as never started. */
  unseenGraceMs: number;
  /** The runner bundle yoke serves (and, reaching through GitHub, publishes); the workflow checks it against its sha256. */
  runner: () => Promise<{ code: string; sha256: string }>;
  /**
   * How runs reach yoke: `api` (they fetch the runner from yoke and call its
   * API) or `github` (they fetch the runner from the repository, where yoke
   * published it, and hand results back as artifacts).
   */
  reach: 'api' | 'github';
}

const PENDING = 'pending:';

/** What yoke dispatched, and once found, the workflow run: `pending:<file>@<ref>`, then `<file>@<ref>#<id>`. */
export interface ActionsRef {
  workflow: string;
  /** The branch the workflow was dispatched on; null for runs recorded before yoke kept it. */
  ref: string | null;
  id: number | null;
}

export function parseActionsRef(launcherRef: string | null): ActionsRef | null {
  if (!launcherRef) return null;
  const m = /^(pending:)?([^@#]+)(?:@([^#]+))?(?:#(\d+))?$/.exec(launcherRef);
  if (!m || (m[1] !== undefined) === (m[4] !== undefined)) return null;
  return { workflow: m[2]!, ref: m[3] ?? null, id: m[4] ? Number(m[4]) : null };
}

export function formatActionsRef(r: ActionsRef): string {
  const base = `${r.workflow}${r.ref ? `@${r.ref}` : ''}`;
  return r.id === null ? `${PENDING}${base}` : `${base}#${r.id}`;
}

export class ActionsLauncher implements Launcher {
  readonly name = 'actions' as const;
  usesSecret(): boolean {
    return false;
  }

  constructor(private readonly opts: ActionsLauncherOptions) {}

  pendingRef(spec: { workflow: string; ref: string }): string {
    return formatActionsRef({ workflow: spec.workflow, ref: spec.ref, id: null });
  }

  /** Repositories the runner of a sha256 is known to be published in (`repo@sha256`): asked of GitHub once per process. */
  private published = new Set<string>();

  async start(spec: LaunchSpec): Promise<{ ref: string | null }> {
    const runner = await this.opts.runner();
    const key = `${spec.repo.fullName.toLowerCase()}@${runner.sha256}`;
    if (this.opts.reach === 'github' && !this.published.has(key)) {
      await this.opts.forge.publishRunner(spec.repo, runner.sha256, runner.code);
      this.published.add(key);
    }
    await this.opts.forge.dispatchWorkflow(spec.repo, spec.workflow, spec.ref, {
      run_id: spec.runId,
      kind: spec.kind,
      subject: spec.subject,
      head_sha: spec.headSha ?? '',
      // LD01: only for a lander, whose workflow declares it (a workflow from before it refuses the dispatch, and says so).
      ...(spec.baseSha ? { base_sha: spec.baseSha } : {}),
      // LD05: only for a stacked lander (a workflow from before stacks refuses the dispatch, and says so).
      ...(spec.stack.length ? { stack: spec.stack.join(' ') } : {}),
      // LD03: only with fast-forward landing (a workflow from before it refuses the dispatch, and says so).
      ...(spec.landSha ? { land_sha: spec.landSha } : {}),
      deadline: new Date(spec.deadline).toISOString(),
      api_url: spec.apiUrl,
      runner_sha256: runner.sha256,
      limits: limitsJson(spec.limits),
      rejection: spec.rejection ?? '',
      // Only when it is not the default: a workflow file from before YOKE_RUNS_REACH keeps working in api mode.
      ...(this.opts.reach === 'github' ? { reach: 'github' } : {}),
      // Only while yoke exports traces (a workflow from before it refuses the dispatch, and says so).
      ...(spec.traceparent ? { traceparent: spec.traceparent } : {}),
    });
    return { ref: this.pendingRef(spec) };
  }

  async liveness(run: Run, repo: RepoRef): Promise<Liveness> {
    const ref = parseActionsRef(run.launcherRef);
    if (!ref) return { state: 'never_started', detail: 'no workflow was dispatched' };
    if (ref.id === null) {
      const found = await this.opts.forge.findWorkflowRun(repo, ref.workflow, run.id, run.launchedAt);
      if (found.kind === 'none') {
        return this.opts.now() - run.launchedAt > this.opts.unseenGraceMs
          ? { state: 'never_started', detail: `no ${ref.workflow} run for ${run.id} appeared` }
          : { state: 'running' };
      }
      // yoke dispatches once: two of its runs under one name bind to neither, and the deadline ends the run.
      if (found.kind === 'many')
        return {
          state: 'unknown',
          detail: `${found.ids.length} ${ref.workflow} runs of yoke's name ${run.id} (${found.ids.join(', ')}); none is bound`,
        };
      const newRef = formatActionsRef({ ...ref, id: found.run.id });
      return found.run.status === 'completed'
        ? { state: 'ended', ref: newRef, detail: `workflow run ${found.run.id} ${found.run.conclusion ?? 'completed'}` }
        : { state: 'running', ref: newRef };
    }
    const wr = await this.opts.forge.getWorkflowRun(repo, ref.id);
    if (!wr) return { state: 'ended', detail: `workflow run ${ref.id} is gone` };
    return wr.status === 'completed'
      ? { state: 'ended', detail: `workflow run ${wr.id} ${wr.conclusion ?? 'completed'}` }
      : { state: 'running' };
  }

  async cancel(run: Run, repo: RepoRef): Promise<void> {
    let ref = parseActionsRef(run.launcherRef);
    if (ref && ref.id === null) {
      const found = await this.opts.forge.findWorkflowRun(repo, ref.workflow, run.id, run.launchedAt);
      if (found.kind === 'many') {
        for (const id of found.ids) await this.opts.forge.cancelWorkflowRun(repo, id);
        return;
      }
      ref = found.kind === 'one' ? { ...ref, id: found.run.id } : ref;
    }
    if (ref?.id) await this.opts.forge.cancelWorkflowRun(repo, ref.id);
  }
}
