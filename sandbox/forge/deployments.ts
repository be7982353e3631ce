import { HttpError } from '../http-error.js';
import type { ForgeRepo, ForgeUser } from './state.js';

// The embedded forge's deployments and environments, as GitHub keeps them:
// deployments with their statuses (newest first; a success makes the
// environment's earlier successful deployments inactive), environments with
// the custom protection rules of apps, and the gate a job that targets such
// an environment waits at until every rule's app has answered. Plain data and
// operations; the JSON shapes and routes live in routes-deployments.ts.

export const STATUS_STATES = [
  'error',
  'failure',
  'inactive',
  'in_progress',
  'queued',
  'pending',
  'success',
  'waiting',
] as const;
export type StatusState = (typeof STATUS_STATES)[number];

export interface DeploymentStatus {
  id: number;
  state: StatusState;
  description: string;
  logUrl: string;
  environmentUrl: string;
  creator: ForgeUser;
  createdAt: number;
}

export interface Deployment {
  id: number;
  repo: string;
  sha: string;
  ref: string;
  task: string;
  environment: string;
  description: string | null;
  payload: Record<string, unknown> | string;
  creator: ForgeUser;
  createdAt: number;
  updatedAt: number;
  /** Newest first, as GitHub lists them. */
  statuses: DeploymentStatus[];
}

export interface Environment {
  id: number;
  name: string;
  createdAt: number;
  updatedAt: number;
  /** Custom deployment protection rules: the app that answers each. */
  rules: { id: number; app: { id: number; slug: string }; enabled: boolean }[];
  /** Which branches may deploy here: any (GitHub's default), protected ones, or the name patterns listed. */
  branchPolicy: { kind: 'all' } | { kind: 'protected' } | { kind: 'custom'; branches: { id: number; name: string }[] };
}

/** A job waiting at an environment's protection rules, and how each app answered. */
export interface Gate {
  repo: string;
  workflowRunId: number;
  environment: string;
  deploymentId: number;
  pending: Set<string>;
  answers: { app: string; state: 'approved' | 'rejected'; comment: string }[];
  settle: (approved: boolean) => void;
}

export interface DeploymentHost {
  nextId(): number;
  now(): number;
  /** GitHub sends `deployment_protection_rule.requested` to the app whose rule the environment has. */
  requestReview(repo: ForgeRepo, d: Deployment, workflowRunId: number): void;
}

export class ForgeDeployments {
  readonly deployments: Deployment[] = [];
  private readonly environments = new Map<string, Map<string, Environment>>();
  readonly gates: Gate[] = [];

  constructor(private readonly host: DeploymentHost) {}

  environmentsOf(repo: ForgeRepo): Map<string, Environment> {
    let m = this.environments.get(repo.fullName);
    if (!m) this.environments.set(repo.fullName, (m = new Map()));
    return m;
  }

  /** A maintainer creates an environment, with custom rules of the apps named (yoke's, say). */
  setEnvironment(repo: ForgeRepo, name: string, ruleApps: { id: number; slug: string }[] = []): Environment {
    const now = this.host.now();
    const env: Environment = {
      id: this.host.nextId(),
      name,
      createdAt: now,
      updatedAt: now,
      rules: ruleApps.map((app) => ({ id: this.host.nextId(), app, enabled: true })),
      branchPolicy: { kind: 'all' },
    };
    this.environmentsOf(repo).set(name, env);
    return env;
  }

  /** A maintainer picks which branches may deploy to an environment (Deployment branches and tags). */
  setBranchPolicy(
    repo: ForgeRepo,
    name: string,
    policy: { kind: 'all' } | { kind: 'protected' } | { kind: 'custom'; branches: string[] },
  ): void {
    const env = this.environmentsOf(repo).get(name);
    if (!env) throw new Error(`no environment ${name}`);
    env.branchPolicy =
      policy.kind === 'custom'
        ? { kind: 'custom', branches: policy.branches.map((b) => ({ id: this.host.nextId(), name: b })) }
        : policy;
  }

  create(repo: ForgeRepo, d: Omit<Deployment, 'id' | 'repo' | 'createdAt' | 'updatedAt' | 'statuses'>): Deployment {
    const now = this.host.now();
    // GitHub creates an environment the first time a deployment names it.
    if (!this.environmentsOf(repo).has(d.environment)) this.setEnvironment(repo, d.environment);
    const dep: Deployment = {
      ...d,
      id: this.host.nextId(),
      repo: repo.fullName,
      createdAt: now,
      updatedAt: now,
      statuses: [],
    };
    this.deployments.push(dep);
    return dep;
  }

  find(repo: ForgeRepo, id: number): Deployment {
    const d = this.deployments.find((x) => x.repo === repo.fullName && x.id === id);
    if (!d) throw new HttpError(404, 'Not Found');
    return d;
  }

  addStatus(
    d: Deployment,
    s: {
      state: StatusState;
      description?: string;
      logUrl?: string;
      environmentUrl?: string;
      creator: ForgeUser;
      autoInactive?: boolean;
    },
  ): DeploymentStatus {
    const now = this.host.now();
    const status: DeploymentStatus = {
      id: this.host.nextId(),
      state: s.state,
      description: s.description ?? '',
      logUrl: s.logUrl ?? '',
      environmentUrl: s.environmentUrl ?? '',
      creator: s.creator,
      createdAt: now,
    };
    d.statuses.unshift(status);
    d.updatedAt = now;
    if (s.state === 'success' && s.autoInactive !== false) {
      for (const o of this.deployments) {
        if (o === d || o.repo !== d.repo || o.environment !== d.environment || o.statuses[0]?.state !== 'success')
          continue;
        o.statuses.unshift({
          ...status,
          id: this.host.nextId(),
          state: 'inactive',
          description: '',
          logUrl: '',
          environmentUrl: '',
        });
        o.updatedAt = now;
      }
    }
    return status;
  }

  /**
   * A job targets an environment (GitHub Actions): its deployment is created at
   * the run's commit; if the environment has enabled custom rules, each app is
   * asked and the job waits until all approve (or one rejects).
   */
  async gate(
    repo: ForgeRepo,
    run: { id: number; headSha: string; ref: string; actor: ForgeUser },
    environment: string,
    actions: ForgeUser,
  ): Promise<{ approved: boolean; deployment: Deployment }> {
    const d = this.create(repo, {
      sha: run.headSha,
      ref: run.ref,
      task: 'deploy',
      environment,
      description: null,
      payload: {},
      creator: actions,
    });
    const env = this.environmentsOf(repo).get(environment)!;
    const apps = env.rules.filter((r) => r.enabled).map((r) => r.app.slug);
    if (apps.length === 0) return { approved: true, deployment: d };
    this.addStatus(d, { state: 'waiting', creator: actions });
    const approved = await new Promise<boolean>((settle) => {
      this.gates.push({
        repo: repo.fullName,
        workflowRunId: run.id,
        environment,
        deploymentId: d.id,
        pending: new Set(apps),
        answers: [],
        settle,
      });
      this.host.requestReview(repo, d, run.id);
    });
    return { approved, deployment: d };
  }

  /** An app answers a waiting job's rule (the deployment_callback_url); false when nothing of this app is pending there. */
  answer(
    repo: ForgeRepo,
    workflowRunId: number,
    environment: string,
    app: string,
    state: 'approved' | 'rejected',
    comment: string,
  ): boolean {
    const g = this.gates.find(
      (x) =>
        x.repo === repo.fullName &&
        x.workflowRunId === workflowRunId &&
        x.environment === environment &&
        x.pending.has(app),
    );
    if (!g) return false;
    g.pending.delete(app);
    g.answers.push({ app, state, comment });
    if (state === 'rejected') g.settle(false);
    else if (g.pending.size === 0) g.settle(true);
    return true;
  }

  /** A cancelled run's waiting jobs give up: nothing will answer them. */
  cancelGates(workflowRunId: number): void {
    for (const g of this.gates) {
      if (g.workflowRunId !== workflowRunId || g.pending.size === 0) continue;
      g.pending.clear();
      g.settle(false);
    }
  }
}
