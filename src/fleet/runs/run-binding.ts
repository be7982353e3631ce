import type { Forge, WorkflowRunView } from '../../forge/types.js';
import { formatActionsRef, parseActionsRef } from '../../launcher/actions.js';
import type { Run } from '../../store/fleet/runs.js';
import type { Store } from '../../store/store.js';
import { repoRefOf } from '../repo-state.js';
import { sameRepo } from '../../kernel/ids.js';

// TR03: what binds an OIDC token to a run, whichever way its result came
// (through yoke's API, or handed back through GitHub as an artifact).

/** The claims of a GitHub Actions OIDC token that bind it to a run. */
export interface TokenClaims {
  repository?: string | undefined;
  repository_id?: string | undefined;
  run_id?: string | undefined;
  workflow_ref?: string | undefined;
  event_name?: string | undefined;
  actor?: string | undefined;
  iat?: number | undefined;
}

/** Verifies a token against the issuer's published keys (http/api/oidc.ts). */
export interface TokenVerifier {
  verify(
    token: string,
    opts?: { audience?: string; asIssued?: boolean },
  ): Promise<{ ok: true; claims: TokenClaims } | { ok: false; detail: string; fault?: boolean }>;
}

export type Bound = { ok: true; workflowRun: WorkflowRunView } | { ok: false; detail: string };

/**
 * TR03: a token speaks for a run only if it comes from exactly the workflow run
 * yoke dispatched for it: resolved now if no liveness check bound it yet, and
 * then the token's repository and its id, workflow file and ref, event and
 * workflow run id must all be that run's, started by yoke's app and re-run by no one.
 */
export async function bindTokenToRun(
  ctx: { store: Store; forge: Forge },
  run: Run,
  claims: TokenClaims,
): Promise<Bound> {
  const no = (detail: string): Bound => ({ ok: false, detail });
  const dispatched = parseActionsRef(run.launcherRef);
  if (!dispatched) return no(`run ${run.id} was not dispatched as a workflow run, so no OIDC token can report for it`);
  if (!sameRepo(claims.repository, run.repo))
    return no(`the token is for ${claims.repository ?? 'no repository'}, not ${run.repo}`);
  const repo = await repoRefOf(ctx.store, run.repo);
  if (!repo) return no(`${run.repo} is not known to yoke`);
  let id = dispatched.id;
  if (id === null) {
    // Not bound yet: find the dispatched workflow run now, never wave the token through.
    const found = await ctx.forge.findWorkflowRun(repo, dispatched.workflow, run.id, run.launchedAt);
    if (found.kind === 'none')
      return no(
        `the ${dispatched.workflow} run yoke dispatched for ${run.id} is not listed yet; report again in a moment`,
      );
    if (found.kind === 'many')
      return no(
        `${found.ids.length} ${dispatched.workflow} runs that yoke dispatched carry the name ${run.id} (${found.ids.join(', ')}); yoke binds none of them`,
      );
    id = found.run.id;
    await ctx.store.runs.setLauncherRef(run.id, formatActionsRef({ ...dispatched, id }));
  }
  if (claims.run_id !== String(id)) return no(`the token is from workflow run ${claims.run_id ?? 'none'}, not ${id}`);
  const wfRun = await ctx.forge.getWorkflowRun(repo, id);
  if (!wfRun) return no(`workflow run ${id} is gone`);
  // Only a run yoke's app started, and that nobody re-ran, reports: a writer's own dispatch or re-run never does.
  const bot = await ctx.forge.botLogin();
  if (wfRun.actor !== bot || (wfRun.triggeringActor ?? wfRun.actor) !== bot)
    return no(
      `workflow run ${id} was ${wfRun.triggeringActor && wfRun.triggeringActor !== wfRun.actor ? `re-run by ${wfRun.triggeringActor}` : `started by ${wfRun.actor ?? 'someone unknown'}`}, not by ${bot}`,
    );
  if (claims.actor !== bot)
    return no(`the token is from a run started by ${claims.actor ?? 'someone unknown'}, not by ${bot}`);
  if (wfRun.repositoryId === null || claims.repository_id !== String(wfRun.repositoryId))
    return no(
      `the token is for repository id ${claims.repository_id ?? 'none'}, not ${wfRun.repositoryId ?? 'unknown'}`,
    );
  if (claims.event_name !== 'workflow_dispatch')
    return no(`the token is from a ${claims.event_name ?? 'unknown'} event, not workflow_dispatch`);
  if (dispatched.ref === null) return no(`yoke did not keep the ref it dispatched run ${run.id} on`);
  const expected = `${run.repo}/.github/workflows/${dispatched.workflow}@refs/heads/${dispatched.ref}`;
  if (claims.workflow_ref?.toLowerCase() !== expected.toLowerCase())
    return no(`the token is from ${claims.workflow_ref ?? 'no workflow'}, not ${expected}`);
  return { ok: true, workflowRun: wfRun };
}
