import { ProbotOctokit, type ApplicationFunction, type Context, type Probot } from 'probot';
import { CONFIG_PATH } from './config/repo-config.js';
import { parseOperatorEnv, type OperatorSettings } from './config/env.js';
import { handleComment } from './commands/handle.js';
import { Engine } from './fleet/engine.js';
import { conditionalCache, type CacheStats } from './forge/conditional-cache.js';
import { GitHubForge, type Octokit } from './forge/github.js';
import type { CommentView, Forge, RepoRef } from './forge/types.js';
import { createApiHandler } from './http/api.js';
import { OidcVerifier } from './http/oidc.js';
import { ActionsLauncher } from './launcher/actions.js';
import { CommandLauncher } from './launcher/command.js';
import type { Launcher } from './launcher/launcher.js';
import { systemClock, systemTimers, type Clock, type Timers } from './log.js';
import { openStore, type Store } from './store/store.js';

// The Probot entry: wires webhooks, the two ticks and the HTTP routes.

export interface YokeOverrides {
  settings?: OperatorSettings;
  env?: Record<string, string | undefined>;
  clock?: Clock;
  timers?: Timers;
  store?: Store;
  cacheStats?: CacheStats;
  /** Start the ticks (default true). Tests drive passes by hand. */
  startTicks?: boolean;
}

export interface YokeRuntime {
  engine: Engine;
  store: Store;
  forge: Forge;
  settings: OperatorSettings;
  cacheStats: CacheStats;
  stop(): void;
}

export class SettingsError extends Error {
  constructor(readonly problems: string[]) {
    super(`yoke cannot start; fix these settings:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

export function resolveSettings(overrides: YokeOverrides): OperatorSettings {
  if (overrides.settings) return overrides.settings;
  const parsed = parseOperatorEnv(overrides.env ?? process.env);
  if (!parsed.ok) throw new SettingsError(parsed.problems);
  return parsed.settings;
}

export interface GitHubClientPolicy {
  throttle: { enabled: boolean; maxRetries: number; maxWaitSeconds: number };
  /** Statuses that are answers, not faults: retrying them only delays the answer (a 409 merge refusal, say). */
  retry: { enabled: boolean; doNotRetry: number[] };
}

export const DEFAULT_CLIENT_POLICY: GitHubClientPolicy = {
  throttle: { enabled: true, maxRetries: 3, maxWaitSeconds: 15 * 60 },
  retry: { enabled: true, doNotRetry: [400, 401, 403, 404, 405, 409, 410, 422, 451] },
};

/**
 * Probot's Octokit with every GET made conditional against the store's cache,
 * and rate-limit answers honoured: wait as long as retry-after or the reset
 * says, within the policy's bounds, then retry (Probot's own default gives up
 * on secondary limits).
 */
export function yokeOctokit(store: Store, clock: Clock, stats: CacheStats, policy: GitHubClientPolicy = DEFAULT_CLIENT_POLICY) {
  const { maxRetries, maxWaitSeconds } = policy.throttle;
  const honour = (retryAfter: number, options: { request?: { retryCount?: number } }) =>
    (options.request?.retryCount ?? 0) < maxRetries && retryAfter <= maxWaitSeconds;
  return ProbotOctokit.plugin(conditionalCache(store.httpCache, () => clock.now(), stats)).defaults((options: Record<string, any>) => ({
    ...options,
    // Probot hands the app-auth strategy a request function without the
    // GitHub Enterprise Server base URL, so installation tokens would be
    // asked of api.github.com; point it where every other request goes.
    auth:
      options.baseUrl && typeof options.auth?.request?.defaults === 'function'
        ? { ...options.auth, request: options.auth.request.defaults({ baseUrl: options.baseUrl }) }
        : options.auth,
    retry: { ...options.retry, enabled: policy.retry.enabled, doNotRetry: policy.retry.doNotRetry },
    throttle: policy.throttle.enabled
      ? { ...options.throttle, enabled: true, onRateLimit: honour, onSecondaryRateLimit: honour }
      : { enabled: false },
  }));
}

function repoOf(payload: { repository?: { owner: { login: string }; name: string; full_name: string }; installation?: { id: number } }): RepoRef | null {
  if (!payload.repository || !payload.installation) return null;
  return {
    owner: payload.repository.owner.login,
    name: payload.repository.name,
    fullName: payload.repository.full_name,
    installationId: payload.installation.id,
  };
}

export function createYokeApp(overrides: YokeOverrides = {}): { appFn: ApplicationFunction; runtime: Promise<YokeRuntime> } {
  let resolveRuntime!: (r: YokeRuntime) => void;
  let rejectRuntime!: (e: unknown) => void;
  const runtime = new Promise<YokeRuntime>((res, rej) => {
    resolveRuntime = res;
    rejectRuntime = rej;
  });

  const appFn: ApplicationFunction = async (app: Probot, { addHandler }) => {
    try {
      const settings = resolveSettings(overrides);
      const clock = overrides.clock ?? systemClock;
      const store = overrides.store ?? openStore(settings.dbPath);
      const cacheStats: CacheStats = overrides.cacheStats ?? { requests: 0, notModified: 0 };
      const forge = new GitHubForge({
          appOctokit: async () => (await app.auth()) as unknown as Octokit,
          installationOctokit: async (id) => (await app.auth(id)) as unknown as Octokit,
          now: () => clock.now(),
          botLogin: settings.botLogin,
        });
      let engine!: Engine;
      const onExit = () => void engine.reaperTick().catch(() => undefined);
      const launcher: Launcher =
        settings.launcher === 'actions'
          ? new ActionsLauncher({ forge, now: () => clock.now(), unseenGraceMs: settings.dispatchGraceMs })
          : new CommandLauncher({ command: settings.command!, logDir: `${settings.dbPath}.runs`, onExit });
      engine = new Engine({
        store,
        forge,
        launcher,
        clock,
        timers: overrides.timers ?? systemTimers,
        log: app.log,
        policy: {
          globalCap: settings.globalCap,
          repoCaps: settings.repoCaps,
          pauseThreshold: settings.pauseThreshold,
          configRefreshMs: settings.configRefreshMs,
          landerAttemptsPerHead: settings.landerAttemptsPerHead,
          tickMs: settings.tickMs,
          reaperMs: settings.reaperMs,
        },
        apiUrl: settings.publicUrl,
        trustedMarkerLogins: settings.trustedMarkerLogins,
      });

      const commandFrom = (repo: RepoRef, comment: CommentView, via: 'webhook' | 'poll') => handleComment(engine, { repo, comment, via });
      engine.onPolledComments = async (repo, comments) => {
        const state = store.repos.get(repo.fullName);
        if (!state) return;
        for (const c of comments) {
          // Only commands written since yoke first saw the repo; older history is not replayed.
          if (c.createdAt >= state.firstSeenAt && !store.commands.get(c.id)) await commandFrom(repo, c, 'poll');
        }
      };

      // GH06: Probot verifies the signature; a repeated delivery id changes nothing.
      const firstDelivery = (context: Context): boolean => store.deliveries.firstSight(context.id, context.name, clock.now());
      const kick = () => void engine.kick().catch((err) => app.log.error({ err: String(err) }, 'kicked pass failed'));

      app.on('issue_comment.created', async (context) => {
        if (!firstDelivery(context)) return;
        const repo = repoOf(context.payload);
        if (!repo) return;
        const known = store.repos.get(repo.fullName);
        if (!known) store.repos.ensure(repo.fullName, repo.installationId, clock.now());
        const c = context.payload.comment;
        await commandFrom(
          repo,
          {
            id: c.id,
            issueNumber: context.payload.issue.number,
            isPull: Boolean(context.payload.issue.pull_request),
            author: c.user?.login ?? 'ghost',
            authorIsBot: c.user?.type === 'Bot',
            body: c.body ?? '',
            createdAt: Date.parse(c.created_at),
          },
          'webhook',
        );
      });
      app.on(
        [
          'issues.labeled',
          'issues.opened',
          'issues.reopened',
          'pull_request.opened',
          'pull_request.reopened',
          'pull_request.synchronize',
          'pull_request.labeled',
          'pull_request.ready_for_review',
          'pull_request_review.submitted',
          'installation.created',
          'installation_repositories.added',
        ],
        async (context) => {
          if (!firstDelivery(context)) return;
          kick();
        },
      );
      app.on('push', async (context) => {
        if (!firstDelivery(context)) return;
        const p = context.payload;
        const touched = p.commits?.some((c) => [...(c.added ?? []), ...(c.modified ?? []), ...(c.removed ?? [])].includes(CONFIG_PATH));
        if (p.ref === `refs/heads/${p.repository.default_branch}` && touched) {
          forge.invalidate(p.repository.full_name);
          kick();
        }
      });
      app.on('workflow_run.completed', async (context) => {
        if (!firstDelivery(context)) return;
        void engine.reaperTick().catch(() => undefined);
      });

      // Always on: Actions runs launched before a switch to the command launcher can still report.
      const oidc = new OidcVerifier({ issuer: settings.oidcIssuer, jwksUrl: settings.oidcJwksUrl, audience: settings.publicUrl, now: () => clock.now() });
      addHandler(createApiHandler({ engine, apiTokens: settings.apiTokens, oidc, audience: settings.publicUrl }));

      if (overrides.startTicks !== false) {
        engine.start();
        // Recover first: reap what ended while yoke was down, then fill.
        void engine.reaperTick().catch((err) => app.log.error({ err: String(err) }, 'first pass failed'));
      }
      app.log.info({ cap: settings.globalCap, launcher: launcher.name, db: settings.dbPath }, 'yoke is running');
      resolveRuntime({
        engine,
        store,
        forge,
        settings,
        cacheStats,
        stop: () => {
          engine.stop();
          if (launcher instanceof CommandLauncher) launcher.killAll();
        },
      });
    } catch (err) {
      rejectRuntime(err);
      throw err;
    }
  };
  return { appFn, runtime };
}
