import type { Forge, RepoRef } from '../forge/types.js';
import type { Run } from '../store/runs.js';
import type { Launcher, LaunchSpec, Liveness } from './launcher.js';

// Runs on GitHub Actions: a workflow_dispatch whose `run_id` input names the
// yoke run. The workflow's `run-name` carries that id, which is how the
// dispatched workflow run is found again (the dispatch answer has no id).

export interface ActionsLauncherOptions {
  forge: Forge;
  now: () => number;
  /** How long a dispatch may go unseen before it counts as never started. */
  unseenGraceMs: number;
}

const PENDING = 'pending:';

export function parseActionsRef(ref: string | null): { workflow: string; id: number | null } | null {
  if (!ref) return null;
  if (ref.startsWith(PENDING)) return { workflow: ref.slice(PENDING.length), id: null };
  const m = /^(.+)#(\d+)$/.exec(ref);
  return m ? { workflow: m[1]!, id: Number(m[2]) } : null;
}

export class ActionsLauncher implements Launcher {
  readonly name = 'actions' as const;
  usesSecret(): boolean {
    return false;
  }

  constructor(private readonly opts: ActionsLauncherOptions) {}

  pendingRef(spec: { workflow: string }): string {
    return `${PENDING}${spec.workflow}`;
  }

  async start(spec: LaunchSpec): Promise<{ ref: string | null }> {
    await this.opts.forge.dispatchWorkflow(spec.repo, spec.workflow, spec.ref, {
      run_id: spec.runId,
      kind: spec.kind,
      subject: spec.subject,
      head_sha: spec.headSha ?? '',
      deadline: new Date(spec.deadline).toISOString(),
      api_url: spec.apiUrl,
    });
    return { ref: this.pendingRef(spec) };
  }

  async liveness(run: Run, repo: RepoRef): Promise<Liveness> {
    const ref = parseActionsRef(run.launcherRef);
    if (!ref) return { state: 'never_started', detail: 'no workflow was dispatched' };
    if (ref.id === null) {
      const found = await this.opts.forge.findWorkflowRun(repo, ref.workflow, run.id, run.launchedAt);
      if (!found) {
        return this.opts.now() - run.launchedAt > this.opts.unseenGraceMs
          ? { state: 'never_started', detail: `no ${ref.workflow} run for ${run.id} appeared` }
          : { state: 'running' };
      }
      const newRef = `${ref.workflow}#${found.id}`;
      return found.status === 'completed'
        ? { state: 'ended', ref: newRef, detail: `workflow run ${found.id} ${found.conclusion ?? 'completed'}` }
        : { state: 'running', ref: newRef };
    }
    const wr = await this.opts.forge.getWorkflowRun(repo, ref.id);
    if (!wr) return { state: 'ended', detail: `workflow run ${ref.id} is gone` };
    return wr.status === 'completed' ? { state: 'ended', detail: `workflow run ${wr.id} ${wr.conclusion ?? 'completed'}` } : { state: 'running' };
  }

  async cancel(run: Run, repo: RepoRef): Promise<void> {
    let ref = parseActionsRef(run.launcherRef);
    if (ref && ref.id === null) {
      const found = await this.opts.forge.findWorkflowRun(repo, ref.workflow, run.id, run.launchedAt);
      ref = found ? { workflow: ref.workflow, id: found.id } : ref;
    }
    if (ref?.id) await this.opts.forge.cancelWorkflowRun(repo, ref.id);
  }
}
