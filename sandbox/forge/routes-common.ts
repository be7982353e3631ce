import { HttpError } from '../http-error.js';
import type { ActionsRunner } from './actions-runner.js';
import type { ForgeDeployments } from './deployments.js';
import type { Ctx, ForgeHttp } from './http.js';
import type { MergeQueues } from './merge-queue.js';
import type { Shapes } from './shapes.js';
import type { ForgeRepo, ForgeState, Issue } from './state.js';

// What every route module is handed, and the look-ups they share.

export interface ForgeHooks {
  /** Runs just before GitHub would merge (a test pushes to the head here). */
  beforeMerge?: (repo: ForgeRepo, pr: number) => void;
  /** LD04: true while GitHub's merge queue should build no merge group (a test waits for the PRs it wants queued together). */
  holdQueue?: (repo: ForgeRepo, branch: string, queued: readonly number[]) => boolean;
}

export interface RouteEnv {
  http: ForgeHttp;
  state: ForgeState;
  shapes: Shapes;
  runner: ActionsRunner;
  deployments: ForgeDeployments;
  /** LD04: the merge queues of the branches that require one. */
  queues: MergeQueues;
  hooks: ForgeHooks;
  app: { id: number; slug: string };
  /** What an installation grants: its permissions and the events it receives (app.yml's by default). */
  grants: (installationId: number) => InstallationGrant;
  /** An installation as GitHub shows it. */
  installation: (installationId: number) => object;
  now: () => number;
  /** Signs the forge's download links (artifacts), as blob storage's SAS tokens. */
  blobKey: string;
}

export interface InstallationGrant {
  permissions: Record<string, string>;
  events: string[];
}

/** The repository a route names, as the caller may see it (an installation sees only its own). */
export function repoOf(env: RouteEnv, ctx: Ctx): ForgeRepo {
  const r = env.state.repos.get(`${ctx.params.owner}/${ctx.params.repo}`);
  if (!r) throw new HttpError(404, 'Not Found');
  if (ctx.auth === 'installation' && ctx.installationId !== r.installationId) throw new HttpError(404, 'Not Found');
  if (ctx.auth === 'workflow' && ctx.tokenRepo !== r.fullName) throw new HttpError(404, 'Not Found');
  env.state.syncPulls(r);
  return r;
}

export function issueOf(r: ForgeRepo, n: string | undefined): Issue {
  const i = r.issues.get(Number(n));
  if (!i) throw new HttpError(404, 'Not Found');
  return i;
}

export function pullOf(r: ForgeRepo, n: string | undefined): Issue {
  const i = issueOf(r, n);
  if (!i.pull) throw new HttpError(404, 'Not Found');
  return i;
}

export function requireWrite(env: RouteEnv, r: ForgeRepo, ctx: Ctx): void {
  if (!env.state.canWrite(r, ctx)) throw new HttpError(403, 'Resource not accessible by integration');
}

/** Labels, as GitHub has it: triage is enough for a person (the role exists for it); the app and write-granted jobs may too. */
export function requireTriage(env: RouteEnv, r: ForgeRepo, ctx: Ctx): void {
  if (ctx.auth === 'user' && ctx.actor && r.collaborators[ctx.actor.login] === 'triage') return;
  requireWrite(env, r, ctx);
}

/** People may comment, react and open PRs without write access; a workflow token may only if its job was granted write. */
export function requireWorkflowWrite(ctx: Ctx): void {
  if (ctx.auth === 'workflow' && !ctx.writes) throw new HttpError(403, 'Resource not accessible by integration');
}
