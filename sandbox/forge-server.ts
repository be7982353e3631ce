import { randomBytes } from 'node:crypto';
import { forgePage } from './forge/pages.js';
import { workflowLinter } from './forge/workflow-lint.js';
import { serveGit } from './forge/git-http.js';
import { join } from 'node:path';
import { ActionsRunner } from './forge/actions-runner.js';
import { ForgeHttp } from './forge/http.js';
import { OidcIssuer } from './forge/oidc-issuer.js';
import { registerActionsRoutes } from './forge/routes-actions.js';
import { registerAppRoutes } from './forge/routes-app.js';
import { registerCheckRoutes } from './forge/routes-checks.js';
import { ForgeDeployments } from './forge/deployments.js';
import { deploymentJson, landedByPush, registerDeploymentRoutes } from './forge/routes-deployments.js';
import { registerQueueRoutes } from './forge/routes-queue.js';
import { MergeQueues } from './forge/merge-queue.js';
import { registerGitRoutes } from './forge/routes-git.js';
import type { ForgeHooks, InstallationGrant } from './forge/routes-common.js';
import { loadShippedSetup } from '../src/http/operator/doctor.js';
import { registerIssueRoutes } from './forge/routes-issues.js';
import { registerPullRoutes } from './forge/routes-pulls.js';
import { Shapes } from './forge/shapes.js';
import { ForgeState, type ForgeRepo, type ForgeUser, type Issue } from './forge/state.js';
import type { ForgeEvent } from './forge/records.js';
import { WebhookSender } from './forge/webhooks.js';

// The embedded forge: the part of GitHub's REST API that yoke (and the demo
// agent) use, on loopback, over real git repositories on disk. It plays
// GitHub Actions too. This class only assembles the parts in ./forge/.

export type { ForgeRepo, ForgeUser, Issue } from './forge/state.js';
export type { RouteDef } from './forge/http.js';

export interface ForgeOptions {
  dataDir: string;
  appId: number;
  appSlug: string;
  /** The app's public key (PEM) that app JWTs must verify against. */
  appPublicKey: string;
  /** Extra environment for the workflow runs the forge starts. */
  runnerEnv?: Record<string, string>;
  now?: () => number;
  /** Added before every answer (the bench's distant GitHub). */
  latencyMs?: number;
  /** What each installation grants by default (app.yml's permissions and events, as a fresh install accepts them). */
  grants?: InstallationGrant;
}

/** What app.yml asks for, as an installation that accepted it grants. */
function appYmlGrant(): InstallationGrant {
  const { permissions, events } = loadShippedSetup();
  return { permissions, events };
}

export class EmbeddedForge {
  readonly state: ForgeState;
  readonly http: ForgeHttp;
  readonly runner: ActionsRunner;
  readonly oidc: OidcIssuer;
  /** Deployments, environments and the jobs waiting at their protection rules. */
  readonly deployments: ForgeDeployments;
  /** Test hooks: run just before GitHub would act. */
  readonly hooks: ForgeHooks = {};
  /** What an installation grants, where it differs from the default (a test takes a permission away, say). */
  readonly grants = new Map<number, InstallationGrant>();
  private readonly shapes: Shapes;
  private readonly webhooks: WebhookSender;
  readonly now: () => number;
  /** Told of each event as it happens (the people the sandbox plays: a maintainer who reviews, say). */
  readonly watchers: ((e: ForgeEvent) => void)[] = [];

  constructor(readonly opts: ForgeOptions) {
    this.now = opts.now ?? (() => Date.now());
    this.shapes = new Shapes(
      () => this.http.url,
      (name) => this.state.repos.get(name),
    );
    this.webhooks = new WebhookSender(this.shapes, (id) => this.installationJson(id));
    this.state = new ForgeState(opts.dataDir, `${opts.appSlug}[bot]`, this.now, (e) => {
      this.webhooks.fromEvent(e);
      for (const watch of this.watchers) watch(e);
    });
    this.http = new ForgeHttp({
      appId: opts.appId,
      appPublicKey: opts.appPublicKey,
      credentials: this.state,
      now: this.now,
      latencyMs: opts.latencyMs,
      repositories: (id) => this.repositoriesOf(id),
    });
    this.oidc = new OidcIssuer('http://placeholder');
    const actions = () => this.state.user('github-actions[bot]', 'Bot');
    this.deployments = new ForgeDeployments({
      nextId: () => this.state.nextId(),
      now: this.now,
      requestReview: (repo, d, runId) =>
        this.webhooks.send('deployment_protection_rule', 'requested', repo, actions(), {
          environment: d.environment,
          event: 'workflow_dispatch',
          deployment_callback_url: this.shapes.apiUrl(
            `/repos/${repo.fullName}/actions/runs/${runId}/deployment_protection_rule`,
          ),
          deployment: deploymentJson(this.shapes, repo, d),
          pull_requests: [],
        }),
    });
    this.runner = new ActionsRunner({
      workDir: join(opts.dataDir, 'runner'),
      extraEnv: opts.runnerEnv ?? {},
      host: {
        url: () => this.http.url,
        now: this.now,
        nextId: () => this.state.nextId(),
        repo: (name) => this.state.repos.get(name),
        workflowToken: (repo, write) => this.state.workflowToken(repo, write),
        repoId: (name) => this.state.repos.get(name)?.id ?? 0,
        mintOidc: (claims) => this.oidc.mint(claims),
        environmentGate: async (repo, run, environment) => {
          const { approved, deployment } = await this.deployments.gate(repo, run, environment, actions());
          if (approved)
            this.deployments.addStatus(deployment, {
              state: 'in_progress',
              logUrl: `${this.http.url}/${repo.fullName}/actions/runs/${run.id}`,
              creator: actions(),
            });
          else
            this.deployments.addStatus(deployment, {
              state: 'failure',
              description: 'Rejected by a deployment protection rule',
              creator: actions(),
            });
          return { approved, deploymentId: deployment.id };
        },
        environmentEnded: (repo, deploymentId, result) => {
          const d = this.deployments.deployments.find((x) => x.id === deploymentId && x.repo === repo.fullName);
          if (d)
            this.deployments.addStatus(d, {
              state: result === 'success' ? 'success' : 'failure',
              logUrl: d.statuses[0]?.logUrl,
              creator: actions(),
            });
        },
        cancelGates: (runId) => this.deployments.cancelGates(runId),
        runCompleted: (run) => {
          const repo = this.state.repos.get(run.repo);
          if (repo)
            this.webhooks.send('workflow_run', 'completed', repo, this.state.user('github-actions[bot]', 'Bot'), {
              workflow_run: this.shapes.workflowRunJson(repo, run),
            });
        },
      },
    });
    const queues = new MergeQueues({
      hold: (repo, branch, queued) => this.hooks.holdQueue?.(repo, branch, queued) ?? false,
      announce: (repo, action, group) => this.state.mergeGroup(repo, action, group),
      landed: (repo, branch, before, after) => {
        this.state.pushed(
          repo,
          `refs/heads/${branch}`,
          before,
          after,
          [],
          this.state.user('github-merge-queue[bot]', 'Bot'),
        );
        landedByPush(repo, branch, before, after, this.now());
      },
    });
    const env = {
      http: this.http,
      state: this.state,
      shapes: this.shapes,
      runner: this.runner,
      deployments: this.deployments,
      queues,
      hooks: this.hooks,
      app: { id: opts.appId, slug: opts.appSlug },
      grants: (id: number) => this.grantOf(id),
      installation: (id: number) => this.installationJson(id),
      now: this.now,
      blobKey: randomBytes(16).toString('hex'),
    };
    registerAppRoutes(env);
    registerIssueRoutes(env);
    registerPullRoutes(env);
    registerActionsRoutes(env);
    registerGitRoutes(env);
    registerCheckRoutes(env);
    registerDeploymentRoutes(env);
    registerQueueRoutes(env);
    this.http.git = (req, url, body) => serveGit(this.state, req, url, body, this.state.now());
    this.http.pages = (pathname) => forgePage(this.state, this.runner.runs, pathname, this.deployments);
    this.http.onRaw('/_actions/oidc/.well-known/jwks', () => ({ status: 200, body: this.oidc.jwks }));
    this.http.onRaw('/_actions/oidc/token', (url, req) => {
      const token = this.runner.oidcToken(url, req.headers.authorization ?? '');
      return token ? { status: 200, body: { value: token } } : null;
    });
  }

  get url(): string {
    return this.http.url;
  }

  get repos(): Map<string, ForgeRepo> {
    return this.state.repos;
  }

  get routes() {
    return this.http.routes;
  }

  get served() {
    return this.http.served;
  }

  set recordResponses(on: boolean) {
    this.http.recordResponses = on;
  }

  /** Where webhooks go, signed with the secret. */
  get webhook(): { url: string; secret: string } | null {
    return this.webhooks.target;
  }

  set webhook(target: { url: string; secret: string } | null) {
    this.webhooks.target = target;
  }

  /** An installation as GitHub shows it, in its API and in its installation events. */
  installationJson(id: number) {
    const first = [...this.state.repos.values()].find((r) => r.installationId === id)!;
    const app = { id: this.opts.appId, slug: this.opts.appSlug };
    return this.shapes.installationJson(id, first.owner, app, first.createdAt, this.grantOf(id));
  }

  /** What an installation grants: its own, or app.yml's. */
  private grantOf(id: number): InstallationGrant {
    return this.grants.get(id) ?? (this.opts.grants ??= appYmlGrant());
  }

  get deliveries() {
    return this.webhooks.deliveries;
  }

  user(login: string, type: 'User' | 'Bot' = 'User'): ForgeUser {
    return this.state.user(login, type);
  }

  personalToken(login: string): string {
    return this.state.personalToken(login);
  }

  private counted = { size: -1, by: new Map<number, number>() };

  /** How many repositories an installation holds (counted again only when the forge's repositories change). */
  private repositoriesOf(installationId: number): number {
    if (this.counted.size !== this.state.repos.size) {
      const by = new Map<number, number>();
      for (const r of this.state.repos.values()) by.set(r.installationId, (by.get(r.installationId) ?? 0) + 1);
      this.counted = { size: this.state.repos.size, by };
    }
    return this.counted.by.get(installationId) ?? 0;
  }

  createRepo(fullName: string, opts: Parameters<ForgeState['createRepo']>[1]): ForgeRepo {
    return this.state.createRepo(fullName, opts);
  }

  createIssue(repo: ForgeRepo, by: ForgeUser, title: string, body: string, labels: string[] = []): Issue {
    return this.state.createIssue(repo, by, title, body, labels);
  }

  async start(port = 0): Promise<string> {
    this.runner.lint = await workflowLinter();
    const url = await this.http.start(port);
    this.oidc.issuer = `${url}/_actions/oidc`;
    return url;
  }

  async stop(): Promise<void> {
    this.runner.stopAll();
    await this.http.stop();
  }
}
